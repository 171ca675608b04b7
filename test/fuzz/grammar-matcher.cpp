// Fuzz target: the grammar matcher and its token-mask computation. The grammars of test/fuzz/grammars/
// (JSON, GBNF written by the TypeScript json-schema-to-grammar, repetition bounds and non-ASCII classes)
// are compiled once against the stories260K vocabulary (512 tokens, so a full mask per step stays cheap under the sanitizers). The
// first input byte picks the grammar; the rest is a program of operations: accept a token id, accept
// raw bytes, or compute the mask. After each mask one token (chosen by the input) is checked: its mask
// bit must equal whether a copy of the matcher accepts it.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <algorithm>
#include <memory>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "fuzz-util.h"
#include "grammar/matcher.h"

using namespace tmill::grammar;

namespace {

struct compiled_set {
    std::shared_ptr<const tmill::tok::vocab> vocab;
    std::vector<std::shared_ptr<const compiled_grammar>> grammars;
};

const compiled_set & compiled() {
    static const compiled_set set = [] {
        compiled_set s;
        s.vocab = fuzz_util::load_vocab("models/stories260K.gguf");
        for (const std::string & text : fuzz_util::read_grammars()) s.grammars.push_back(compile_grammar(text, s.vocab));
        return s;
    }();
    return set;
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
    (void)compiled();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t * data, size_t size) {
    if (size == 0) return 0;
    const compiled_set & cs = compiled();
    matcher m(cs.grammars[data[0] % cs.grammars.size()]);
    const int32_t n_vocab = cs.vocab->n_tokens();
    std::vector<uint8_t> allowed(size_t(n_vocab), 0);
    int n_masks = 0;
    size_t i = 1;
    while (i < size) {
        const uint8_t op = data[i++];
        switch (op % 4) {
        case 0: case 1: {  // accept a token id (some out of range: rejected, not read past the vocab)
            if (i + 1 >= size) return 0;
            const int32_t id = int32_t(data[i] | (uint32_t(data[i + 1]) << 8)) % (n_vocab + 8) - (op >> 7);
            i += 2;
            try {
                (void)m.accept_token(id);
            } catch (const tmill::error &) {
            }
            break;
        }
        case 2: {  // accept 0..15 raw bytes (arbitrary UTF-8 or not)
            const size_t n = std::min<size_t>(op >> 4, size - i);
            (void)m.accept_bytes(std::string_view(reinterpret_cast<const char *>(data + i), n));
            i += n;
            break;
        }
        case 3: {  // mask, then one consistency probe; bounded so one input stays cheap
            if (++n_masks > 8) break;
            const int32_t n_allowed = m.fill_mask(allowed.data());
            int32_t count = 0;
            for (uint8_t a : allowed) count += a;
            if (count != n_allowed) std::abort();
            if (i + 1 >= size) return 0;
            const int32_t probe = int32_t(data[i] | (uint32_t(data[i + 1]) << 8)) % n_vocab;
            i += 2;
            matcher copy = m;
            if (!m.mask_overflowed() && copy.accept_token(probe) != (allowed[size_t(probe)] != 0)) std::abort();
            break;
        }
        }
        (void)m.can_end();
        (void)m.is_complete();
    }
    return 0;
}
