// The scalar reference of the AMX level's numerics (kernels/amx/block-step.h): per (row, token), the exact
// int32 dot of each 32-block, folded in block order with amx_block_step. Plain C++ (the baseline build, in
// tm_core): the yardstick the tile kernels are tested against bit for bit, and what they run when their
// activation buffer cannot be allocated.
#include "kernels/amx/amx.h"
#include "kernels/amx/block-step.h"
#include "kernels/ref/rows.h"
#include "quant/fp16.h"
#include "quant/iq4-nl.h"
#include "quant/q4-0.h"
#include "quant/q8-0.h"

// No FMA the source does not write (a build with FMA enabled could otherwise contract the scale product).
#pragma GCC optimize("fp-contract=off")

namespace tmill::kernels::amx_ref {

using quant::block_q8_0;

namespace {

// Element j (0..31) of a weight block as int8, as the tile kernels decode it.
int q8_0_weight(const quant::block_q8_0 & w, int j) { return w.qs[j]; }
int nibble(const uint8_t * qs, int j) { return j < 16 ? qs[j] & 0x0f : qs[j - 16] >> 4; }
int q4_0_weight(const quant::block_q4_0 & w, int j) { return nibble(w.qs, j) - 8; }
int iq4_nl_weight(const quant::block_iq4_nl & w, int j) { return quant::k_iq4nl_values[nibble(w.qs, j)]; }

template <typename W, int (*Weight)(const W &, int)>
float dot(const W * w, const block_q8_0 * x, int64_t nb) {
    float acc = 0.0f;
    for (int64_t b = 0; b < nb; ++b) {
        int32_t c = 0;
        for (int j = 0; j < quant::qk8_0; ++j) c += Weight(w[b], j) * int32_t(x[b].qs[j]);
        acc = amx_block_step(acc, quant::fp16_to_fp32(w[b].d), quant::fp16_to_fp32(x[b].d), c);
    }
    return acc;
}

} // namespace

TM_MATMUL_ROWS_ENTRY(matmul_q8_0, ref::quant_rows<block_q8_0, block_q8_0, quant::qk8_0, dot<block_q8_0, q8_0_weight>>)
TM_MATMUL_ROWS_ENTRY(matmul_q4_0,
                     ref::quant_rows<quant::block_q4_0, block_q8_0, quant::qk4_0, dot<quant::block_q4_0, q4_0_weight>>)
TM_MATMUL_ROWS_ENTRY(matmul_iq4_nl, ref::quant_rows<quant::block_iq4_nl, block_q8_0, quant::qk4_nl,
                                                    dot<quant::block_iq4_nl, iq4_nl_weight>>)

} // namespace tmill::kernels::amx_ref
