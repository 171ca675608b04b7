// Reference matmul rows for the 32-element formats with a minimum (Q4_1, Q5_1) against Q8_1 activations,
// ggml's vec_dot_q4_1_q8_1 / q5_1_q8_1 reference arithmetic: per block (d_w * d_x) * exact integer dot
// + m_w * s_x (s_x = d_x * sum(x), stored in the activation block), accumulated in float in block order.
#include "kernels/kernels.h"
#include "kernels/ref/rows.h"
#include "quant/fp16.h"
#include "quant/q4-1.h"
#include "quant/q5-0.h"
#include "quant/q5-1.h"
#include "quant/q8-1.h"

#include <cstring>

namespace tmill::kernels::ref {

using quant::block_q4_1;
using quant::block_q5_1;
using quant::block_q8_1;
using quant::fp16_to_fp32;

namespace {
float block_sum(int isum, uint16_t dw, uint16_t mw, const block_q8_1 & x) {
    return (fp16_to_fp32(dw) * fp16_to_fp32(x.d)) * float(isum) + fp16_to_fp32(mw) * fp16_to_fp32(x.s);
}

float dot_q4_1(const block_q4_1 * w, const block_q8_1 * x, int64_t nb) {
    float sum = 0.0f;
    for (int64_t b = 0; b < nb; ++b) {
        int isum = 0;
        for (int j = 0; j < quant::qk4_1 / 2; ++j) {
            isum += int(w[b].qs[j] & 0x0f) * int(x[b].qs[j]);
            isum += int(w[b].qs[j] >> 4) * int(x[b].qs[j + quant::qk4_1 / 2]);
        }
        sum += block_sum(isum, w[b].d, w[b].m, x[b]);
    }
    return sum;
}

float dot_q5_1(const block_q5_1 * w, const block_q8_1 * x, int64_t nb) {
    float sum = 0.0f;
    for (int64_t b = 0; b < nb; ++b) {
        uint32_t qh;
        std::memcpy(&qh, w[b].qh, 4);
        int isum = 0;
        for (int j = 0; j < quant::qk5_1; ++j) isum += quant::q5_value(w[b].qs, qh, j) * int(x[b].qs[j]);
        sum += block_sum(isum, w[b].d, w[b].m, x[b]);
    }
    return sum;
}
} // namespace

TM_MATMUL_ROWS_ENTRY(matmul_q4_1, quant_rows<block_q4_1, block_q8_1, quant::qk4_1, dot_q4_1>)
TM_MATMUL_ROWS_ENTRY(matmul_q5_1, quant_rows<block_q5_1, block_q8_1, quant::qk5_1, dot_q5_1>)

} // namespace tmill::kernels::ref
