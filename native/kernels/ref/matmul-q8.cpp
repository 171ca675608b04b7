// Reference matmul rows for the 32-element block formats against Q8_0 activations (Q8_0, Q4_0, Q5_0,
// IQ4_NL weights): an exact integer dot per block, scaled by d_w * d_x and accumulated in float in block
// order (ggml's vec_dot_*_q8_0 reference arithmetic).
#include "kernels/kernels.h"
#include "kernels/ref/rows.h"
#include "quant/fp16.h"
#include "quant/iq4-nl.h"
#include "quant/q4-0.h"
#include "quant/q5-0.h"
#include "quant/q8-0.h"

#include <cstring>

namespace tmill::kernels::ref {

using quant::block_iq4_nl;
using quant::block_q4_0;
using quant::block_q5_0;
using quant::block_q8_0;

namespace {
float scale_of(uint16_t dw, const block_q8_0 & x) { return quant::fp16_to_fp32(dw) * quant::fp16_to_fp32(x.d); }

float dot_q8_0(const block_q8_0 * w, const block_q8_0 * x, int64_t nb) {
    float sum = 0.0f;
    for (int64_t b = 0; b < nb; ++b) {
        int isum = 0;
        for (int j = 0; j < quant::qk8_0; ++j) isum += int(w[b].qs[j]) * int(x[b].qs[j]);
        sum += float(isum) * scale_of(w[b].d, x[b]);
    }
    return sum;
}

// Q4_0 and IQ4_NL share one layout (F16 d, 16 bytes of nibbles as Q4_0's); Value maps a nibble to its level.
template <typename W, int (*Value)(int)>
float dot_nibbles(const W * w, const block_q8_0 * x, int64_t nb) {
    float sum = 0.0f;
    for (int64_t b = 0; b < nb; ++b) {
        int isum = 0;
        for (int j = 0; j < 16; ++j) {
            isum += Value(w[b].qs[j] & 0x0f) * int(x[b].qs[j]);
            isum += Value(w[b].qs[j] >> 4) * int(x[b].qs[j + 16]);
        }
        sum += float(isum) * scale_of(w[b].d, x[b]);
    }
    return sum;
}
int q4_0_level(int n) { return n - 8; }
int iq4_nl_level(int n) { return quant::k_iq4nl_values[n]; }

float dot_q5_0(const block_q5_0 * w, const block_q8_0 * x, int64_t nb) {
    float sum = 0.0f;
    for (int64_t b = 0; b < nb; ++b) {
        uint32_t qh;
        std::memcpy(&qh, w[b].qh, 4);
        int isum = 0;
        for (int j = 0; j < quant::qk5_0; ++j) isum += (quant::q5_value(w[b].qs, qh, j) - 16) * int(x[b].qs[j]);
        sum += float(isum) * scale_of(w[b].d, x[b]);
    }
    return sum;
}
} // namespace

TM_MATMUL_ROWS_ENTRY(matmul_q8_0, quant_rows<block_q8_0, block_q8_0, quant::qk8_0, dot_q8_0>)
TM_MATMUL_ROWS_ENTRY(matmul_q4_0, quant_rows<block_q4_0, block_q8_0, quant::qk4_0, dot_nibbles<block_q4_0, q4_0_level>>)
TM_MATMUL_ROWS_ENTRY(matmul_q5_0, quant_rows<block_q5_0, block_q8_0, quant::qk5_0, dot_q5_0>)
TM_MATMUL_ROWS_ENTRY(matmul_iq4_nl,
                     quant_rows<block_iq4_nl, block_q8_0, quant::qk4_nl, dot_nibbles<block_iq4_nl, iq4_nl_level>>)

} // namespace tmill::kernels::ref
