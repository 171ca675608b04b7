// frequency_penalty: subtracts penalty × (times the token occurred in the output). Prompt tokens do
// not count (OpenAI / vLLM semantics).
#include "sample/processors.h"

#include "base/error.h"
#include "sample/py-format.h"
#include "sample/token-counter.h"

namespace tmill {

namespace {

class frequency_penalty_processor final : public logits_processor {
public:
    frequency_penalty_processor(float penalty, const request_shape & shape)
        : penalty_(penalty), counts_(shape.max_output) {}
    const char * name() const override { return "frequency_penalty"; }
    processor_stage stage() const override { return processor_stage::penalty; }
    bool argmax_invariant() const override { return false; }
    void apply(float * row, const token_history &, sampler_workspace & ws) override {
        for (int32_t id : counts_.ids()) {
            if (id < 0 || id >= ws.n_vocab) continue;
            row[id] -= penalty_ * (float)counts_.count(id);
        }
    }
    void accept(int32_t token) override { counts_.add(token); }

private:
    float penalty_;
    token_counter counts_;  // occurrences of each output token
};

} // namespace

processor_ptr make_frequency_penalty(const sampling_params & p, const request_shape & shape) {
    TM_CHECK(p.frequency_penalty >= -2.0f && p.frequency_penalty <= 2.0f, invalid_argument,
             "frequency_penalty must be in [-2, 2], got " + py_float(p.frequency_penalty) + ".");
    if (p.frequency_penalty == 0.0f) return nullptr;
    return std::make_unique<frequency_penalty_processor>(p.frequency_penalty, shape);
}

} // namespace tmill
