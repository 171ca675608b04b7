#include "quant/q3-k.h"

#include "base/error.h"
#include "quant/fp16.h"

namespace tmill::quant {

void unpack_q3k_scales(const uint8_t * q, int8_t * sc) {
    for (int s = 0; s < 16; ++s) {
        const int low = s < 8 ? (q[s] & 0x0f) : (q[s - 8] >> 4);
        const int high = (q[8 + s % 4] >> (2 * (s / 4))) & 3;
        sc[s] = int8_t((low | (high << 4)) - 32);
    }
}

void dequantize_row_q3_k(const void * src, float * dst, int64_t n) {
    TM_CHECK(n % qk_k == 0, invalid_argument, "dequantize_row_q3_k: n must be a multiple of 256");
    const block_q3_k * b = static_cast<const block_q3_k *>(src);
    for (int64_t i = 0; i < n / qk_k; ++i) {
        const float d = fp16_to_fp32(b[i].d);
        int8_t sc[16];
        unpack_q3k_scales(b[i].scales, sc);
        for (int s = 0; s < 16; ++s) {
            const float dl = d * float(sc[s]);
            for (int l = 0; l < 16; ++l) {
                const int e = 16 * s + l;
                dst[i * qk_k + e] = dl * float(q3k_value(b[i], e));
            }
        }
    }
}

} // namespace tmill::quant
