#include "model/gelu.h"

#include <cmath>
#include <vector>

#include "quant/fp16.h"

namespace tmill {

float gelu_tanh_f32(float x) {
    constexpr float coef_a = 0.044715f;
    constexpr float sqrt_2_over_pi = 0.79788456080286535587989211986876f;
    return 0.5f * x * (1.0f + std::tanh(sqrt_2_over_pi * x * (1.0f + coef_a * x * x)));
}

namespace {

// (65536) F16 bits of gelu_tanh_f32 of every F16 value, built once on first use (thread-safe static).
const std::vector<uint16_t> & gelu_table() {
    static const std::vector<uint16_t> table = [] {
        std::vector<uint16_t> t(size_t(1) << 16);
        for (size_t h = 0; h < t.size(); ++h) t[h] = quant::fp32_to_fp16(gelu_tanh_f32(quant::fp16_to_fp32(uint16_t(h))));
        return t;
    }();
    return table;
}

} // namespace

void gelu_mul(const float * a, const float * b, float * y, int64_t n) {
    const uint16_t * table = gelu_table().data();
    for (int64_t i = 0; i < n; ++i) {
        const float x = a[i];
        if (x <= -10.0f) {
            y[i] = 0.0f;
        } else if (x >= 10.0f) {
            y[i] = x * b[i];
        } else {
            y[i] = quant::fp16_to_fp32(table[quant::fp32_to_fp16(x)]) * b[i];
        }
    }
}

} // namespace tmill
