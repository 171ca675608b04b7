#include "quant/iq4-xs.h"

#include "base/error.h"
#include "quant/fp16.h"

namespace tmill::quant {

void dequantize_row_iq4_xs(const void * src, float * dst, int64_t n) {
    TM_CHECK(n % qk_k == 0, invalid_argument, "dequantize_row_iq4_xs: n must be a multiple of 256");
    const block_iq4_xs * b = static_cast<const block_iq4_xs *>(src);
    for (int64_t i = 0; i < n / qk_k; ++i) {
        const float d = fp16_to_fp32(b[i].d);
        for (int j = 0; j < qk_k / 32; ++j) {
            const float dl = d * float(iq4xs_scale(b[i], j) - 32);
            const uint8_t * qs = b[i].qs + 16 * j;
            float * y = dst + i * qk_k + 32 * j;
            for (int l = 0; l < 16; ++l) {
                y[l] = dl * float(k_iq4nl_values[qs[l] & 0x0f]);
                y[l + 16] = dl * float(k_iq4nl_values[qs[l] >> 4]);
            }
        }
    }
}

} // namespace tmill::quant
