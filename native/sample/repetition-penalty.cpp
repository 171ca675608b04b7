// repetition_penalty: for every token seen in the prompt or the output, a positive logit is divided
// by the penalty and a non-positive one multiplied (vLLM / CTRL semantics).
#include "sample/processors.h"

#include "base/error.h"
#include "sample/py-format.h"
#include "sample/token-counter.h"

#include <cmath>

namespace tmill {

namespace {

class repetition_penalty_processor final : public logits_processor {
public:
    repetition_penalty_processor(float penalty, const request_shape & shape)
        : penalty_(penalty), seen_(shape.n_prompt + shape.max_output) {
        for (int32_t i = 0; i < shape.n_prompt; ++i) seen_.add(shape.prompt[i]);
    }
    const char * name() const override { return "repetition_penalty"; }
    processor_stage stage() const override { return processor_stage::penalty; }
    bool argmax_invariant() const override { return false; }
    void apply(float * row, const token_history &, sampler_workspace & ws) override {
        for (int32_t id : seen_.ids()) {
            if (id < 0 || id >= ws.n_vocab) continue;
            float v = row[id];
            row[id] = v > 0.0f ? v / penalty_ : v * penalty_;
        }
    }
    void accept(int32_t token) override { seen_.add(token); }

private:
    float penalty_;
    token_counter seen_;  // distinct tokens of prompt + output
};

} // namespace

processor_ptr make_repetition_penalty(const sampling_params & p, const request_shape & shape) {
    TM_CHECK(std::isfinite(p.repetition_penalty), invalid_argument,
             "repetition_penalty must be a finite number, got " + py_float(p.repetition_penalty) + ".");
    TM_CHECK(p.repetition_penalty > 0.0f, invalid_argument,
             "repetition_penalty must be greater than zero, got " + py_float(p.repetition_penalty) + ".");
    if (p.repetition_penalty == 1.0f) return nullptr;
    TM_CHECK(shape.n_prompt == 0 || shape.prompt, invalid_argument, "repetition_penalty: prompt ids missing");
    return std::make_unique<repetition_penalty_processor>(p.repetition_penalty, shape);
}

} // namespace tmill
