// logit_bias: adds a fixed bias per token id; biases are clamped to [-100, 100] as vLLM does.
#include "sample/processors.h"

#include "base/error.h"
#include "sample/py-format.h"

#include <algorithm>
#include <map>

namespace tmill {

namespace {

class logit_bias_processor final : public logits_processor {
public:
    explicit logit_bias_processor(std::vector<std::pair<int32_t, float>> bias) : bias_(std::move(bias)) {}
    const char * name() const override { return "logit_bias"; }
    processor_stage stage() const override { return processor_stage::mask; }
    bool argmax_invariant() const override { return false; }
    void apply(float * row, const token_history &, sampler_workspace &) override {
        for (const auto & b : bias_) row[b.first] += b.second;
    }

private:
    std::vector<std::pair<int32_t, float>> bias_;  // (n_bias) distinct in-vocab ids, clamped biases
};

} // namespace

processor_ptr make_logit_bias(const sampling_params & p, const request_shape & shape) {
    if (p.logit_bias.empty()) return nullptr;
    std::vector<int32_t> bad;
    std::map<int32_t, float> merged;  // a repeated id keeps its last value, like a JSON object
    for (const auto & b : p.logit_bias) {
        if (b.first < 0 || b.first >= shape.n_vocab) bad.push_back(b.first);
        merged[b.first] = std::min(100.0f, std::max(-100.0f, b.second));
    }
    TM_CHECK(bad.empty(), invalid_argument,
             "token_id(s) " + py_int_list(bad) + " in logit_bias contain out-of-vocab token ids. Vocabulary size: " +
                 std::to_string(shape.n_vocab));
    return std::make_unique<logit_bias_processor>(
        std::vector<std::pair<int32_t, float>>(merged.begin(), merged.end()));
}

} // namespace tmill
