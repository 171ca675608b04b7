// presence_penalty: subtracts the penalty once from every token that occurred in the output.
#include "sample/processors.h"

#include "base/error.h"
#include "sample/py-format.h"
#include "sample/token-counter.h"

namespace tmill {

namespace {

class presence_penalty_processor final : public logits_processor {
public:
    presence_penalty_processor(float penalty, const request_shape & shape)
        : penalty_(penalty), seen_(shape.max_output) {}
    const char * name() const override { return "presence_penalty"; }
    processor_stage stage() const override { return processor_stage::penalty; }
    bool argmax_invariant() const override { return false; }
    void apply(float * row, const token_history &, sampler_workspace & ws) override {
        for (int32_t id : seen_.ids())
            if (id >= 0 && id < ws.n_vocab) row[id] -= penalty_;
    }
    void accept(int32_t token) override { seen_.add(token); }

private:
    float penalty_;
    token_counter seen_;  // distinct output tokens
};

} // namespace

processor_ptr make_presence_penalty(const sampling_params & p, const request_shape & shape) {
    TM_CHECK(p.presence_penalty >= -2.0f && p.presence_penalty <= 2.0f, invalid_argument,
             "presence_penalty must be in [-2, 2], got " + py_float(p.presence_penalty) + ".");
    if (p.presence_penalty == 0.0f) return nullptr;
    return std::make_unique<presence_penalty_processor>(p.presence_penalty, shape);
}

} // namespace tmill
