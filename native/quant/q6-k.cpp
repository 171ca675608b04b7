#include "quant/q6-k.h"

#include "base/error.h"
#include "quant/fp16.h"

namespace tmill::quant {

void dequantize_row_q6_k(const void * src, float * dst, int64_t n) {
    TM_CHECK(n % qk_k == 0, invalid_argument, "dequantize_row_q6_k: n must be a multiple of 256");
    const block_q6_k * b = static_cast<const block_q6_k *>(src);
    for (int64_t i = 0; i < n / qk_k; ++i) {
        const float d = fp16_to_fp32(b[i].d);
        for (int e = 0; e < qk_k; ++e) dst[i * qk_k + e] = d * float(b[i].scales[e / 16]) * float(q6_k_value(b[i], e));
    }
}

} // namespace tmill::quant
