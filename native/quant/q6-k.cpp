#include "quant/q6-k.h"

#include "base/error.h"
#include "quant/fp16.h"

namespace tmill::quant {

void dequantize_row_q6_k(const void * src, float * dst, int64_t n) {
    TM_CHECK(n % qk_k == 0, invalid_argument, "dequantize_row_q6_k: n must be a multiple of 256");
    const block_q6_k * b = static_cast<const block_q6_k *>(src);
    for (int64_t i = 0; i < n / qk_k; ++i) {
        const float d = fp16_to_fp32(b[i].d);
        for (int h = 0; h < 2; ++h) {
            const uint8_t * ql = b[i].ql + 64 * h;
            const uint8_t * qh = b[i].qh + 32 * h;
            const int8_t * sc = b[i].scales + 8 * h;
            float * y = dst + i * qk_k + 128 * h;
            for (int l = 0; l < 32; ++l) {
                const int s = l / 16;
                const int q1 = int((ql[l] & 0x0f) | (((qh[l] >> 0) & 3) << 4)) - 32;
                const int q2 = int((ql[l + 32] & 0x0f) | (((qh[l] >> 2) & 3) << 4)) - 32;
                const int q3 = int((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
                const int q4 = int((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
                y[l] = d * float(sc[s + 0]) * float(q1);
                y[l + 32] = d * float(sc[s + 2]) * float(q2);
                y[l + 64] = d * float(sc[s + 4]) * float(q3);
                y[l + 96] = d * float(sc[s + 6]) * float(q4);
            }
        }
    }
}

} // namespace tmill::quant
