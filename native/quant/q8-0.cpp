#include "quant/q8-0.h"

#include "base/error.h"
#include "quant/fp16.h"

#include <cmath>

namespace tmill::quant {

void dequantize_row_q8_0(const void * src, float * dst, int64_t n) {
    TM_CHECK(n % qk8_0 == 0, invalid_argument, "dequantize_row_q8_0: n must be a multiple of 32");
    const block_q8_0 * b = static_cast<const block_q8_0 *>(src);
    for (int64_t i = 0; i < n / qk8_0; ++i) {
        const float d = fp16_to_fp32(b[i].d);
        for (int j = 0; j < qk8_0; ++j) dst[i * qk8_0 + j] = d * float(b[i].qs[j]);
    }
}

float quantize_block_q8(const float * x, int8_t * qs) {
    float amax = 0.0f;
    for (int j = 0; j < qk8_0; ++j) amax = std::fmax(amax, std::fabs(x[j]));
    const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
    for (int j = 0; j < qk8_0; ++j) qs[j] = int8_t(std::nearbyint(x[j] * id));
    return amax / 127.0f;
}

void quantize_row_q8_0(const float * src, void * dst, int64_t n) {
    TM_CHECK(n % qk8_0 == 0, invalid_argument, "quantize_row_q8_0: n must be a multiple of 32");
    block_q8_0 * b = static_cast<block_q8_0 *>(dst);
    for (int64_t i = 0; i < n / qk8_0; ++i) b[i].d = fp32_to_fp16(quantize_block_q8(src + i * qk8_0, b[i].qs));
}

} // namespace tmill::quant
