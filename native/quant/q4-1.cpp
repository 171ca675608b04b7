#include "quant/q4-1.h"

#include "base/error.h"
#include "quant/fp16.h"

namespace tmill::quant {

void dequantize_row_q4_1(const void * src, float * dst, int64_t n) {
    TM_CHECK(n % qk4_1 == 0, invalid_argument, "dequantize_row_q4_1: n must be a multiple of 32");
    const block_q4_1 * b = static_cast<const block_q4_1 *>(src);
    for (int64_t i = 0; i < n / qk4_1; ++i) {
        const float d = fp16_to_fp32(b[i].d), m = fp16_to_fp32(b[i].m);
        float * y = dst + i * qk4_1;
        for (int j = 0; j < qk4_1 / 2; ++j) {
            y[j] = float(b[i].qs[j] & 0x0f) * d + m;
            y[j + qk4_1 / 2] = float(b[i].qs[j] >> 4) * d + m;
        }
    }
}

} // namespace tmill::quant
