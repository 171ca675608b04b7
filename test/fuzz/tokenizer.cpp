// Fuzz target: the tokenizer and detokenizers on arbitrary bytes, over real vocabularies (an SPM, a
// byte-level BPE and a second BPE pre-tokenizer), loaded once. The first input byte picks the vocabulary
// and the flags; the rest is (a) text to tokenize and detokenize, and (b) reread as a sequence of token
// ids (valid and out-of-range) for the batch and incremental detokenizers. An out-of-range id must be
// skipped or rejected with tmill::error, never read out of bounds.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "fuzz-util.h"
#include "tokenizer/detokenizer.h"
#include "tokenizer/vocab.h"

using tmill::tok::vocab;

namespace {

const std::vector<std::shared_ptr<const vocab>> & vocabs() {
    static const std::vector<std::shared_ptr<const vocab>> all = {
        fuzz_util::load_vocab("models/vocab/ggml-vocab-llama-spm.gguf"),
        fuzz_util::load_vocab("models/vocab/ggml-vocab-llama-bpe.gguf"),
        fuzz_util::load_vocab("models/vocab/ggml-vocab-gpt-2.gguf"),
        fuzz_util::load_vocab("models/vocab/ggml-vocab-deepseek-coder.gguf"),
    };
    return all;
}

void detokenize_all(const vocab & v, const std::vector<int32_t> & ids, const tmill::tok::detok_options & opt) {
    try {
        (void)v.detokenize(ids.data(), ids.size(), opt);
    } catch (const tmill::error &) {
        // an out-of-range id: the batch detokenizer rejects the whole sequence
    }
    (void)tmill::tok::holds_text(v, ids.data(), ids.size());
    tmill::tok::incremental_detokenizer inc(v, opt);
    for (int32_t id : ids) {
        try {
            (void)inc.push(id);
        } catch (const tmill::error &) {
            // an out-of-range id: rejected, and the detokenizer stays usable
        }
    }
    (void)inc.flush();
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
    (void)vocabs();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t * data, size_t size) {
    if (size == 0) return 0;
    const uint8_t sel = data[0];
    const vocab & v = *vocabs()[sel % vocabs().size()];
    const bool add_special = (sel >> 2) & 1, parse_special = (sel >> 3) & 1;
    tmill::tok::detok_options opt;
    opt.skip_special_tokens = (sel >> 4) & 1;
    opt.spaces_between_special_tokens = (sel >> 5) & 1;
    const std::string_view text(reinterpret_cast<const char *>(data + 1), size - 1);

    const std::vector<int32_t> ids = v.tokenize(text, add_special, parse_special);
    for (int32_t id : ids) {
        if (!v.valid(id)) std::abort();  // the tokenizer must only produce ids of its vocabulary
    }
    detokenize_all(v, ids, opt);

    // The same bytes as raw ids: 16-bit little-endian, spread a little past the vocabulary's end.
    std::vector<int32_t> raw;
    const int32_t span = v.n_tokens() + 16;
    for (size_t i = 1; i + 1 < size; i += 2) {
        const int32_t x = int32_t(data[i] | (uint32_t(data[i + 1]) << 8));
        raw.push_back(x % span - ((sel >> 6) & 1));
    }
    detokenize_all(v, raw, opt);
    return 0;
}
