// Reference matmul rows for Q8_0 and Q4_0 weights against Q8_0 activations: an exact integer dot
// per 32-block, scaled by d_w * d_x and accumulated in float in block order (as ggml's reference).
#include "kernels/kernels.h"
#include "quant/fp16.h"
#include "quant/q4-0.h"
#include "quant/q8-0.h"

namespace tmill::kernels::ref {

using quant::block_q4_0;
using quant::block_q8_0;

namespace {
float dot_q8_0(const block_q8_0 * w, const block_q8_0 * x, int64_t nb) {
    float sum = 0.0f;
    for (int64_t b = 0; b < nb; ++b) {
        int isum = 0;
        for (int j = 0; j < quant::qk8_0; ++j) isum += int(w[b].qs[j]) * int(x[b].qs[j]);
        sum += float(isum) * (quant::fp16_to_fp32(w[b].d) * quant::fp16_to_fp32(x[b].d));
    }
    return sum;
}

float dot_q4_0(const block_q4_0 * w, const block_q8_0 * x, int64_t nb) {
    float sum = 0.0f;
    for (int64_t b = 0; b < nb; ++b) {
        int isum = 0;
        for (int j = 0; j < quant::qk4_0 / 2; ++j) {
            isum += (int(w[b].qs[j] & 0x0f) - 8) * int(x[b].qs[j]);
            isum += (int(w[b].qs[j] >> 4) - 8) * int(x[b].qs[j + quant::qk4_0 / 2]);
        }
        sum += float(isum) * (quant::fp16_to_fp32(w[b].d) * quant::fp16_to_fp32(x[b].d));
    }
    return sum;
}
} // namespace

void matmul_q8_0(const void * w, size_t wb, const void * x, size_t xb, int64_t n_tok, int64_t n_in,
                      int64_t r0, int64_t r1, float * y, int64_t ldy) {
    const int64_t nb = n_in / quant::qk8_0;
    for (int64_t t = 0; t < n_tok; ++t) {
        const auto * xr = reinterpret_cast<const block_q8_0 *>(static_cast<const char *>(x) + size_t(t) * xb);
        for (int64_t r = r0; r < r1; ++r) {
            const auto * wr = reinterpret_cast<const block_q8_0 *>(static_cast<const char *>(w) + size_t(r) * wb);
            y[t * ldy + r] = dot_q8_0(wr, xr, nb);
        }
    }
}

void matmul_q4_0(const void * w, size_t wb, const void * x, size_t xb, int64_t n_tok, int64_t n_in,
                      int64_t r0, int64_t r1, float * y, int64_t ldy) {
    const int64_t nb = n_in / quant::qk4_0;
    for (int64_t t = 0; t < n_tok; ++t) {
        const auto * xr = reinterpret_cast<const block_q8_0 *>(static_cast<const char *>(x) + size_t(t) * xb);
        for (int64_t r = r0; r < r1; ++r) {
            const auto * wr = reinterpret_cast<const block_q4_0 *>(static_cast<const char *>(w) + size_t(r) * wb);
            y[t * ldy + r] = dot_q4_0(wr, xr, nb);
        }
    }
}

} // namespace tmill::kernels::ref
