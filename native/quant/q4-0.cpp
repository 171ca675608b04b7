#include "quant/q4-0.h"

#include "base/error.h"
#include "quant/fp16.h"

#include <algorithm>
#include <cmath>

namespace tmill::quant {

void dequantize_row_q4_0(const void * src, float * dst, int64_t n) {
    TM_CHECK(n % qk4_0 == 0, invalid_argument, "dequantize_row_q4_0: n must be a multiple of 32");
    const block_q4_0 * b = static_cast<const block_q4_0 *>(src);
    for (int64_t i = 0; i < n / qk4_0; ++i) {
        const float d = fp16_to_fp32(b[i].d);
        float * y = dst + i * qk4_0;
        for (int j = 0; j < qk4_0 / 2; ++j) {
            y[j] = d * float(int(b[i].qs[j] & 0x0f) - 8);
            y[j + qk4_0 / 2] = d * float(int(b[i].qs[j] >> 4) - 8);
        }
    }
}

void quantize_row_q4_0(const float * src, void * dst, int64_t n) {
    TM_CHECK(n % qk4_0 == 0, invalid_argument, "quantize_row_q4_0: n must be a multiple of 32");
    block_q4_0 * b = static_cast<block_q4_0 *>(dst);
    for (int64_t i = 0; i < n / qk4_0; ++i) {
        const float * x = src + i * qk4_0;
        float amax = 0.0f, max = 0.0f;
        for (int j = 0; j < qk4_0; ++j) {
            if (std::fabs(x[j]) > amax) { amax = std::fabs(x[j]); max = x[j]; }
        }
        const float d = max / -8.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        b[i].d = fp32_to_fp16(d);
        for (int j = 0; j < qk4_0 / 2; ++j) {
            const int q0 = std::min(15, int(x[j] * id + 8.5f));
            const int q1 = std::min(15, int(x[j + qk4_0 / 2] * id + 8.5f));
            b[i].qs[j] = uint8_t(q0 | (q1 << 4));
        }
    }
}

} // namespace tmill::quant
