// min_tokens: while fewer than min_tokens tokens have been generated, EOS ids and stop token ids get
// -inf so generation cannot end early. EOS stays masked even with ignore_eos (vLLM does the same).
#include "sample/processors.h"

#include "base/error.h"

#include <algorithm>
#include <limits>

namespace tmill {

namespace {

class min_tokens_processor final : public logits_processor {
public:
    min_tokens_processor(int32_t min_tokens, std::vector<int32_t> ids) : min_tokens_(min_tokens), ids_(std::move(ids)) {}
    const char * name() const override { return "min_tokens"; }
    processor_stage stage() const override { return processor_stage::mask; }
    bool argmax_invariant() const override { return false; }
    void apply(float * row, const token_history & h, sampler_workspace &) override {
        if (h.n_output >= min_tokens_) return;
        for (int32_t id : ids_) row[id] = -std::numeric_limits<float>::infinity();
    }

private:
    int32_t min_tokens_;
    std::vector<int32_t> ids_;  // (n_stop_ids) EOS ∪ stop_token_ids, in vocab
};

} // namespace

processor_ptr make_min_tokens(const sampling_params & p, const request_shape & shape) {
    TM_CHECK(p.min_tokens >= 0, invalid_argument,
             "min_tokens must be greater than or equal to 0, got " + std::to_string(p.min_tokens) + ".");
    TM_CHECK(p.min_tokens <= p.max_tokens, invalid_argument,
             "min_tokens must be less than or equal to max_tokens=" + std::to_string(p.max_tokens) + ", got " +
                 std::to_string(p.min_tokens) + ".");
    if (p.min_tokens == 0) return nullptr;
    std::vector<int32_t> ids;
    for (int32_t id : p.eos_token_ids) if (id >= 0 && id < shape.n_vocab) ids.push_back(id);
    for (int32_t id : p.stop_token_ids) if (id >= 0 && id < shape.n_vocab) ids.push_back(id);
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    if (ids.empty()) return nullptr;
    return std::make_unique<min_tokens_processor>(p.min_tokens, std::move(ids));
}

} // namespace tmill
