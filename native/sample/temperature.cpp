// temperature: divides the logits by t. 0 means greedy (the sampler then skips every argmax-invariant
// processor); 0 < t < 0.01 is raised to 0.01 as vLLM does, to keep the division finite.
#include "sample/processors.h"

#include "base/error.h"
#include "sample/py-format.h"

#include <cmath>

namespace tmill {

float effective_temperature(float temperature) {
    if (temperature == 0.0f) return 0.0f;
    return temperature < 0.01f ? 0.01f : temperature;
}

namespace {

class temperature_processor final : public logits_processor {
public:
    explicit temperature_processor(float t) : t_(t) {}
    const char * name() const override { return "temperature"; }
    processor_stage stage() const override { return processor_stage::temperature; }
    bool argmax_invariant() const override { return true; }
    void apply(float * row, const token_history &, sampler_workspace & ws) override {
        for (int32_t i = 0; i < ws.n_vocab; ++i) row[i] /= t_;
    }

private:
    float t_;
};

} // namespace

processor_ptr make_temperature(const sampling_params & p, const request_shape &) {
    TM_CHECK(std::isfinite(p.temperature), invalid_argument,
             "temperature must be a finite number, got " + py_float(p.temperature) + ".");
    TM_CHECK(p.temperature >= 0.0f, invalid_argument,
             "temperature must be non-negative, got " + py_float(p.temperature) + ".");
    TM_CHECK(p.temperature <= 2.0f, invalid_argument,
             "temperature must be in [0, 2], got " + py_float(p.temperature) + ".");
    float t = effective_temperature(p.temperature);
    if (t == 0.0f || t == 1.0f) return nullptr;
    return std::make_unique<temperature_processor>(t);
}

} // namespace tmill
