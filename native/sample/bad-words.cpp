// bad_words: vLLM's rule. Each entry is one tokenized variant of a bad word (the caller passes both
// the plain and the leading-space variant); its last token is banned whenever the tokens before it
// equal the tail of the output so far. A single-token word is always banned.
#include "sample/processors.h"

#include "base/error.h"
#include "sample/py-format.h"

#include <limits>

namespace tmill {

namespace {

class bad_words_processor final : public logits_processor {
public:
    explicit bad_words_processor(std::vector<std::vector<int32_t>> words) : words_(std::move(words)) {}
    const char * name() const override { return "bad_words"; }
    processor_stage stage() const override { return processor_stage::mask; }
    bool argmax_invariant() const override { return false; }
    void apply(float * row, const token_history & h, sampler_workspace &) override {
        for (const auto & w : words_) {
            const int32_t n_prefix = (int32_t)w.size() - 1;
            if (n_prefix > h.n_output) continue;
            const int32_t * tail = h.output + (h.n_output - n_prefix);
            bool match = true;
            for (int32_t i = 0; i < n_prefix && match; ++i) match = tail[i] == w[i];
            if (match) row[w.back()] = -std::numeric_limits<float>::infinity();
        }
    }

private:
    std::vector<std::vector<int32_t>> words_;  // (n_words, word_len ≥ 1) token ids, all in vocab
};

} // namespace

std::vector<std::vector<int32_t>> bad_words_token_ids(const std::vector<std::string> & words, const tokenize_fn & tokenize) {
    std::vector<std::vector<int32_t>> out;
    for (const auto & word : words) {
        size_t start = 0;
        while (start < word.size() && std::string(" \t\n\r\v\f").find(word[start]) != std::string::npos) ++start;
        const std::string stripped = word.substr(start);
        std::vector<int32_t> plain = tokenize(stripped);
        if (plain.empty()) continue;
        std::vector<int32_t> spaced = tokenize(" " + stripped);
        out.push_back(plain);
        if (!spaced.empty() && spaced[0] != plain[0] && spaced.size() == plain.size()) out.push_back(std::move(spaced));
    }
    return out;
}

processor_ptr make_bad_words(const sampling_params & p, const request_shape & shape) {
    std::vector<std::vector<int32_t>> words;
    std::vector<int32_t> bad;
    for (const auto & w : p.bad_words_token_ids) {
        if (w.empty()) continue;
        for (int32_t id : w)
            if (id < 0 || id >= shape.n_vocab) bad.push_back(id);
        words.push_back(w);
    }
    TM_CHECK(bad.empty(), invalid_argument,
             "The model vocabulary size is " + std::to_string(shape.n_vocab) +
                 ", but the following tokens were specified as bad: " + py_int_list(bad) +
                 ". All token id values should be integers satisfying: 0 <= token_id < " +
                 std::to_string(shape.n_vocab) + ".");
    if (words.empty()) return nullptr;
    return std::make_unique<bad_words_processor>(std::move(words));
}

} // namespace tmill
