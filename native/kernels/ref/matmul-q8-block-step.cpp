// The scalar reference of the block-step numerics (kernels/block-step/step.h), which the avx512 and
// avx512+amx levels compute for Q8_0, Q4_0, IQ4_NL and Q5_0 weights (against Q8_0), Q4_1 and Q5_1 (against Q8_1)
// and Q6_K (against Q8_K): per (row, token), the exact int32 dot of each 32-block, folded in block order with
// block_step (block_step_min for the formats with a minimum); for Q6_K the exact scaled sum of each super-block,
// folded with block_step_k (from the GGUF rows or from rows repacked 16 at a time). Plain C++ (the baseline build, in tm_core): the
// yardstick the AVX-512 and AMX kernels are tested against bit for bit, and what they run when their scratch
// buffers cannot be allocated.
#include "kernels/block-step/reference.h"
#include "kernels/block-step/step.h"
#include "kernels/ref/rows.h"
#include "quant/fp16.h"
#include "quant/iq4-nl.h"
#include "quant/q4-0.h"
#include "quant/q4-1.h"
#include "quant/q4-0-x16.h"
#include "quant/q4-1-x16.h"
#include "quant/q5-0.h"
#include "quant/q5-0-x16.h"
#include "quant/q5-1.h"
#include "quant/q6-k.h"
#include "quant/q6-k-x16.h"
#include "quant/q8-0.h"
#include "quant/q8-0-x16.h"
#include "quant/q8-1.h"
#include "quant/q8-k.h"

#include <cstring>

// No FMA the source does not write (a build with FMA enabled could otherwise contract the scale product).
#pragma GCC optimize("fp-contract=off")

namespace tmill::kernels::block_step_ref {

using quant::block_q8_0;

namespace {

// Element j (0..31) of a weight block as int8, as the SIMD and tile kernels decode it
// (kernels/simd/int8-weights.h).
int q8_0_weight(const quant::block_q8_0 & w, int j) { return w.qs[j]; }
int nibble(const uint8_t * qs, int j) { return j < 16 ? qs[j] & 0x0f : qs[j - 16] >> 4; }
int q4_0_weight(const quant::block_q4_0 & w, int j) { return nibble(w.qs, j) - 8; }
int iq4_nl_weight(const quant::block_iq4_nl & w, int j) { return quant::k_iq4nl_values[nibble(w.qs, j)]; }
int q5_0_weight(const quant::block_q5_0 & w, int j) {
    uint32_t qh;
    std::memcpy(&qh, w.qh, 4);
    return quant::q5_value(w.qs, qh, j) - 16;
}
// The unsigned levels of the formats with a minimum (w = d * q + m).
int q4_1_weight(const quant::block_q4_1 & w, int j) { return nibble(w.qs, j); }
int q5_1_weight(const quant::block_q5_1 & w, int j) {
    uint32_t qh;
    std::memcpy(&qh, w.qh, 4);
    return quant::q5_value(w.qs, qh, j);
}

// block(b): the row's block b (whatever layout it is read from).
template <typename W, int (*Weight)(const W &, int), typename Block>
float dot_of(const Block & block, const block_q8_0 * x, int64_t nb) {
    float acc = 0.0f;
    for (int64_t b = 0; b < nb; ++b) {
        const W wb = block(b);
        int32_t c = 0;
        for (int j = 0; j < quant::qk8_0; ++j) c += Weight(wb, j) * int32_t(x[b].qs[j]);
        acc = block_step(acc, quant::fp16_to_fp32(wb.d), quant::fp16_to_fp32(x[b].d), c);
    }
    return acc;
}

template <typename W, int (*Weight)(const W &, int)>
float dot(const W * w, const block_q8_0 * x, int64_t nb) {
    return dot_of<W, Weight>([w](int64_t b) { return w[b]; }, x, nb);
}

template <typename W, int (*Weight)(const W &, int)>
void rows(const void * w, size_t wb, const void * x, size_t xb, int64_t n_tok, int64_t n_in, int64_t r0, int64_t r1,
          float * y, int64_t ldy) {
    ref::quant_rows<W, block_q8_0, quant::qk8_0, dot<W, Weight>>(w, wb, x, xb, n_tok, n_in, r0, r1, y, ldy);
}

// Q4_1 and Q5_1 against Q8_1: each block's step, then its minimum's (block_step_min). block(b): the row's block b
// (whatever layout it is read from).
template <typename W, int (*Weight)(const W &, int), typename Block>
float dot_min_of(const Block & block, const quant::block_q8_1 * x, int64_t nb) {
    float acc = 0.0f;
    for (int64_t b = 0; b < nb; ++b) {
        const W wb = block(b);
        int32_t c = 0;
        for (int j = 0; j < quant::qk8_1; ++j) c += Weight(wb, j) * int32_t(x[b].qs[j]);
        acc = block_step_min(acc, quant::fp16_to_fp32(wb.d), quant::fp16_to_fp32(x[b].d), c, quant::fp16_to_fp32(wb.m),
                             quant::fp16_to_fp32(x[b].s));
    }
    return acc;
}

template <typename W, int (*Weight)(const W &, int)>
float dot_min(const W * w, const quant::block_q8_1 * x, int64_t nb) {
    return dot_min_of<W, Weight>([w](int64_t b) { return w[b]; }, x, nb);
}

template <typename W, int (*Weight)(const W &, int)>
void rows_min(const void * w, size_t wb, const void * x, size_t xb, int64_t n_tok, int64_t n_in, int64_t r0, int64_t r1,
              float * y, int64_t ldy) {
    ref::quant_rows<W, quant::block_q8_1, quant::qk8_1, dot_min<W, Weight>>(w, wb, x, xb, n_tok, n_in, r0, r1, y, ldy);
}

// Q6_K against Q8_K: per super-block the exact isum = sum_e sc[e / 16] * (q_e - 32) * x_e, folded with
// block_step_k.
template <typename Block>
float dot_q6_k_of(const Block & block, const quant::block_q8_k * x, int64_t nb) {
    float acc = 0.0f;
    for (int64_t b = 0; b < nb; ++b) {
        const quant::block_q6_k wb = block(b);
        int32_t isum = 0;
        for (int e = 0; e < quant::qk_k; ++e) isum += int32_t(wb.scales[e / 16]) * quant::q6_k_value(wb, e) * int32_t(x[b].qs[e]);
        acc = block_step_k(acc, quant::fp16_to_fp32(wb.d), x[b].d, isum);
    }
    return acc;
}

float dot_q6_k(const quant::block_q6_k * w, const quant::block_q8_k * x, int64_t nb) {
    return dot_q6_k_of([w](int64_t b) { return w[b]; }, x, nb);
}

// Q6_K rows repacked 16 at a time (quant/q6-k-x16.h; r0 and r1 multiples of 16): each row's blocks read back from
// its group.
void rows_q6_k_x16(const void * w, size_t wb, const void * x, size_t xb, int64_t n_tok, int64_t n_in, int64_t r0,
                   int64_t r1, float * y, int64_t ldy) {
    ref::x16_rows<quant::block_q6_k_x16, quant::block_q8_k, quant::qk_k>(
        w, wb, x, xb, n_tok, n_in, r0, r1, y, ldy, [](const quant::block_q6_k_x16 * g, int lane, const quant::block_q8_k * xr, int64_t nb) {
            return dot_q6_k_of([g, lane](int64_t b) { return quant::q6_k_x16_row(g[b], lane); }, xr, nb);
        });
}

// Q8_0 rows repacked 16 at a time (quant/q8-0-x16.h; r0 and r1 multiples of 16): each row's blocks read back
// from its group.
void rows_q8_0_x16(const void * w, size_t wb, const void * x, size_t xb, int64_t n_tok, int64_t n_in, int64_t r0,
                   int64_t r1, float * y, int64_t ldy) {
    ref::x16_rows<quant::block_q8_0_x16, block_q8_0, quant::qk8_0>(
        w, wb, x, xb, n_tok, n_in, r0, r1, y, ldy, [](const quant::block_q8_0_x16 * g, int lane, const block_q8_0 * xr, int64_t nb) {
            return dot_of<block_q8_0, q8_0_weight>([g, lane](int64_t b) { return quant::q8_0_x16_row_block(g, b, lane); }, xr, nb);
        });
}

// Q4_1 rows repacked 16 at a time (quant/q4-1-x16.h; r0 and r1 multiples of 16): each row's blocks read back
// from its group.
void rows_q4_1_x16(const void * w, size_t wb, const void * x, size_t xb, int64_t n_tok, int64_t n_in, int64_t r0,
                   int64_t r1, float * y, int64_t ldy) {
    ref::x16_rows<quant::block_q4_1_x16, quant::block_q8_1, quant::qk4_1>(
        w, wb, x, xb, n_tok, n_in, r0, r1, y, ldy, [](const quant::block_q4_1_x16 * g, int lane, const quant::block_q8_1 * xr, int64_t nb) {
            return dot_min_of<quant::block_q4_1, q4_1_weight>([g, lane](int64_t b) { return quant::q4_1_x16_row_block(g[b], lane); }, xr, nb);
        });
}

// Q4_0 or IQ4_NL rows repacked 16 at a time (quant/q4-0-x16.h; r0 and r1 multiples of 16): each row's blocks read
// back from its group (an IQ4_NL block has Q4_0's layout).
template <typename W, int (*Weight)(const W &, int)>
void rows_q4_0_x16(const void * w, size_t wb, const void * x, size_t xb, int64_t n_tok, int64_t n_in, int64_t r0,
                   int64_t r1, float * y, int64_t ldy) {
    static_assert(sizeof(W) == sizeof(quant::block_q4_0), "Q4_0's block layout");
    ref::x16_rows<quant::block_q4_0_x16, block_q8_0, quant::qk8_0>(
        w, wb, x, xb, n_tok, n_in, r0, r1, y, ldy, [](const quant::block_q4_0_x16 * g, int lane, const block_q8_0 * xr, int64_t nb) {
            return dot_of<W, Weight>(
                [g, lane](int64_t b) {
                    const quant::block_q4_0 blk = quant::q4_0_x16_row_block(g, b, lane);
                    W out;
                    std::memcpy(&out, &blk, sizeof out);
                    return out;
                },
                xr, nb);
        });
}

// Q5_0 rows repacked 16 at a time (quant/q5-0-x16.h; r0 and r1 multiples of 16): each row's blocks read back from
// its group.
void rows_q5_0_x16(const void * w, size_t wb, const void * x, size_t xb, int64_t n_tok, int64_t n_in, int64_t r0,
                   int64_t r1, float * y, int64_t ldy) {
    ref::x16_rows<quant::block_q5_0_x16, block_q8_0, quant::qk8_0>(
        w, wb, x, xb, n_tok, n_in, r0, r1, y, ldy, [](const quant::block_q5_0_x16 * g, int lane, const block_q8_0 * xr, int64_t nb) {
            return dot_of<quant::block_q5_0, q5_0_weight>([g, lane](int64_t b) { return quant::q5_0_x16_row_block(g, b, lane); }, xr, nb);
        });
}

} // namespace

TM_MATMUL_ROWS_ENTRY(matmul_q8_0_x16, rows_q8_0_x16)
TM_MATMUL_ROWS_ENTRY(matmul_q5_0_x16, rows_q5_0_x16)
TM_MATMUL_ROWS_ENTRY(matmul_q4_0_x16, rows_q4_0_x16<quant::block_q4_0, q4_0_weight>)
TM_MATMUL_ROWS_ENTRY(matmul_iq4_nl_x16, rows_q4_0_x16<quant::block_iq4_nl, iq4_nl_weight>)
TM_MATMUL_ROWS_ENTRY(matmul_q4_1_x16, rows_q4_1_x16)
TM_MATMUL_ROWS_ENTRY(matmul_q6_k_x16, rows_q6_k_x16)
TM_MATMUL_ROWS_ENTRY(matmul_q8_0, rows<block_q8_0, q8_0_weight>)
TM_MATMUL_ROWS_ENTRY(matmul_q4_0, rows<quant::block_q4_0, q4_0_weight>)
TM_MATMUL_ROWS_ENTRY(matmul_iq4_nl, rows<quant::block_iq4_nl, iq4_nl_weight>)
TM_MATMUL_ROWS_ENTRY(matmul_q5_0, rows<quant::block_q5_0, q5_0_weight>)
TM_MATMUL_ROWS_ENTRY(matmul_q4_1, rows_min<quant::block_q4_1, q4_1_weight>)
TM_MATMUL_ROWS_ENTRY(matmul_q5_1, rows_min<quant::block_q5_1, q5_1_weight>)
TM_MATMUL_ROWS_ENTRY(matmul_q6_k, ref::quant_rows<quant::block_q6_k, quant::block_q8_k, quant::qk_k, dot_q6_k>)

} // namespace tmill::kernels::block_step_ref
