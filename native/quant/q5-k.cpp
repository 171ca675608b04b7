#include "quant/q5-k.h"

#include "base/error.h"
#include "quant/fp16.h"

namespace tmill::quant {

void dequantize_row_q5_k(const void * src, float * dst, int64_t n) {
    TM_CHECK(n % qk_k == 0, invalid_argument, "dequantize_row_q5_k: n must be a multiple of 256");
    const block_q5_k * b = static_cast<const block_q5_k *>(src);
    for (int64_t i = 0; i < n / qk_k; ++i) {
        const float d = fp16_to_fp32(b[i].d), dmin = fp16_to_fp32(b[i].dmin);
        uint8_t sc[8], m[8];
        unpack_k4_scales(b[i].scales, sc, m);
        float * y = dst + i * qk_k;
        for (int c = 0; c < 4; ++c) {
            const uint8_t * q = b[i].qs + 32 * c;
            const float d1 = d * sc[2 * c], m1 = dmin * m[2 * c];
            const float d2 = d * sc[2 * c + 1], m2 = dmin * m[2 * c + 1];
            const uint8_t u1 = uint8_t(1u << (2 * c)), u2 = uint8_t(2u << (2 * c));
            for (int l = 0; l < 32; ++l)
                y[64 * c + l] = d1 * float((q[l] & 0x0f) + ((b[i].qh[l] & u1) ? 16 : 0)) - m1;
            for (int l = 0; l < 32; ++l)
                y[64 * c + 32 + l] = d2 * float((q[l] >> 4) + ((b[i].qh[l] & u2) ? 16 : 0)) - m2;
        }
    }
}

} // namespace tmill::quant
