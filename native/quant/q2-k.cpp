#include "quant/q2-k.h"

#include "base/error.h"
#include "quant/fp16.h"

namespace tmill::quant {

void dequantize_row_q2_k(const void * src, float * dst, int64_t n) {
    TM_CHECK(n % qk_k == 0, invalid_argument, "dequantize_row_q2_k: n must be a multiple of 256");
    const block_q2_k * b = static_cast<const block_q2_k *>(src);
    for (int64_t i = 0; i < n / qk_k; ++i) {
        const float d = fp16_to_fp32(b[i].d), dmin = fp16_to_fp32(b[i].dmin);
        for (int s = 0; s < qk_k / 16; ++s) {
            const float dl = d * float(b[i].scales[s] & 0x0f), ml = dmin * float(b[i].scales[s] >> 4);
            for (int l = 0; l < 16; ++l) {
                const int e = 16 * s + l;
                dst[i * qk_k + e] = dl * float(q2k_value(b[i].qs, e)) - ml;
            }
        }
    }
}

} // namespace tmill::quant
