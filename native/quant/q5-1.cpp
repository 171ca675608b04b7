#include "quant/q5-1.h"

#include "base/error.h"
#include "quant/fp16.h"
#include "quant/q5-0.h"

#include <cstring>

namespace tmill::quant {

void dequantize_row_q5_1(const void * src, float * dst, int64_t n) {
    TM_CHECK(n % qk5_1 == 0, invalid_argument, "dequantize_row_q5_1: n must be a multiple of 32");
    const block_q5_1 * b = static_cast<const block_q5_1 *>(src);
    for (int64_t i = 0; i < n / qk5_1; ++i) {
        const float d = fp16_to_fp32(b[i].d), m = fp16_to_fp32(b[i].m);
        uint32_t qh;
        std::memcpy(&qh, b[i].qh, 4);
        for (int j = 0; j < qk5_1; ++j) dst[i * qk5_1 + j] = float(q5_value(b[i].qs, qh, j)) * d + m;
    }
}

} // namespace tmill::quant
