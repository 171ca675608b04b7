#include "quant/q5-0.h"

#include "base/error.h"
#include "quant/fp16.h"

#include <cstring>

namespace tmill::quant {

void dequantize_row_q5_0(const void * src, float * dst, int64_t n) {
    TM_CHECK(n % qk5_0 == 0, invalid_argument, "dequantize_row_q5_0: n must be a multiple of 32");
    const block_q5_0 * b = static_cast<const block_q5_0 *>(src);
    for (int64_t i = 0; i < n / qk5_0; ++i) {
        const float d = fp16_to_fp32(b[i].d);
        uint32_t qh;
        std::memcpy(&qh, b[i].qh, 4);
        for (int j = 0; j < qk5_0; ++j) dst[i * qk5_0 + j] = float(q5_value(b[i].qs, qh, j) - 16) * d;
    }
}

} // namespace tmill::quant
