// Reference matmul rows for the 256-element super-block formats (Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_XS)
// against Q8_K activations. Per super-block the scaled integer sums are exact; the weight offsets (mins,
// or -32 for Q6_K) are applied through the activations' 16-element sums. Float accumulation runs in
// block order: sum += (d_x * d_w) * isum (- (d_x * dmin_w) * msum), ggml's per-super-block arithmetic —
// except Q4_K and Q6_K, which follow, step for step, the kernels llama.cpp's x86 builds run for them
// (NOTE(k-matmul-ggml) below), so that every level gives their bits.
#include "kernels/kernels.h"
#include "kernels/ref/rows.h"
#include "quant/fp16.h"
#include "quant/iq4-xs.h"
#include "quant/q2-k.h"
#include "quant/q3-k.h"
#include "quant/q4-k-x16.h"
#include "quant/q4-k.h"
#include "quant/q5-k.h"
#include "quant/q6-k.h"
#include "quant/q8-k.h"

#include <cmath>

namespace tmill::kernels::ref {

using quant::block_iq4_xs;
using quant::block_q2_k;
using quant::block_q3_k;
using quant::block_q4_k;
using quant::block_q5_k;
using quant::block_q6_k;
using quant::block_q8_k;
using quant::qk_k;

namespace {
// q: (256) unsigned 4/5-bit values in element order. Returns d_x * (d * sum_j sc_j * dot_j - dmin * sum_j m_j * xsum_j).
float k4_block(const uint8_t * q, const uint8_t * scales, uint16_t d16, uint16_t dmin16, const block_q8_k & x) {
    uint8_t sc[8], m[8];
    quant::unpack_k4_scales(scales, sc, m);
    int isum = 0, msum = 0;
    for (int j = 0; j < 8; ++j) {
        int dot = 0;
        for (int l = 0; l < 32; ++l) dot += int(q[32 * j + l]) * int(x.qs[32 * j + l]);
        isum += int(sc[j]) * dot;
        msum += int(m[j]) * (int(x.bsums[2 * j]) + int(x.bsums[2 * j + 1]));
    }
    return x.d * quant::fp16_to_fp32(d16) * float(isum) - x.d * quant::fp16_to_fp32(dmin16) * float(msum);
}

// NOTE(k-matmul-ggml): llama.cpp's x86 builds (AVX2 and up) repack Q4_K weights whose row count is a
// multiple of 8 and multiply one token by them with ggml_gemv_q4_K_8x8_q8_K: per super-block the exact
// integer sums isum = sum_j sc_j * dot_j and msum = sum_j m_j * xsum_j, then two F32 chains,
// acc = fma(isum, d_w * d_x, acc) and macc = fma(msum, dmin_w * d_x, macc), and acc - macc at the end.
// Q6_K is not repacked: ggml_vec_dot_q6_K_q8_K (AVX2) keeps 8 int32 lanes per super-block — lane l sums
// sc * (q + 32) * x over the elements at bytes 4l..4l+3 of each 32-element chunk, minus 32 * (sc * xsum)
// of sub-blocks 2l and 2l+1 — adds each lane into an 8-lane F32 accumulator with fma(d_x * d_w, lane,
// acc), and sums the 8 lanes at the end as hsum8 does. (Several tokens at once go through other kernels
// in llama.cpp — a 4-token Q4_K gemm that rounds differently — so llama.cpp is compared one token per
// batch: docs/kernels.md.)
// block(b): the row's super-block b (a block_q4_k, whatever layout it is read from).
template <typename Blocks>
float dot_q4_k_of(const Blocks & block, const block_q8_k * x, int64_t nb) {
    float acc = 0.0f, macc = 0.0f;
    for (int64_t b = 0; b < nb; ++b) {
        const block_q4_k w = block(b);
        uint8_t sc[8], m[8];
        quant::unpack_k4_scales(w.scales, sc, m);
        int isum = 0, msum = 0;
        for (int j = 0; j < 8; ++j) {
            const uint8_t * qs = w.qs + 32 * (j / 2);
            const int shift = 4 * (j % 2);
            int dot = 0;
            for (int l = 0; l < 32; ++l) dot += int((qs[l] >> shift) & 0x0f) * int(x[b].qs[32 * j + l]);
            isum += int(sc[j]) * dot;
            msum += int(m[j]) * (int(x[b].bsums[2 * j]) + int(x[b].bsums[2 * j + 1]));
        }
        acc = std::fma(float(isum), quant::fp16_to_fp32(w.d) * x[b].d, acc);
        macc = std::fma(float(msum), quant::fp16_to_fp32(w.dmin) * x[b].d, macc);
    }
    return acc - macc;
}

float dot_q4_k(const block_q4_k * w, const block_q8_k * x, int64_t nb) {
    return dot_q4_k_of([w](int64_t b) { return w[b]; }, x, nb);
}

// Q4_K rows repacked 16 at a time (quant/q4-k-x16.h; r0 and r1 multiples of 16): each row's blocks read back
// from its group, then dot_q4_k's steps.
void rows_q4_k_x16(const void * w, size_t wb, const void * x, size_t xb, int64_t n_tok, int64_t n_in, int64_t r0, int64_t r1,
                   float * y, int64_t ldy) {
    x16_rows<quant::block_q4_k_x16, block_q8_k, qk_k>(
        w, wb, x, xb, n_tok, n_in, r0, r1, y, ldy, [](const quant::block_q4_k_x16 * g, int lane, const block_q8_k * xr, int64_t nb) {
            return dot_q4_k_of([g, lane](int64_t b) { return quant::q4_k_x16_row(g[b], lane); }, xr, nb);
        });
}

float dot_q5_k(const block_q5_k * w, const block_q8_k * x, int64_t nb) {
    float sum = 0.0f;
    uint8_t q[qk_k];
    for (int64_t b = 0; b < nb; ++b) {
        for (int c = 0; c < 4; ++c)
            for (int l = 0; l < 32; ++l) {
                const uint8_t h = w[b].qh[l];
                q[64 * c + l] = uint8_t((w[b].qs[32 * c + l] & 0x0f) | (((h >> (2 * c)) & 1) << 4));
                q[64 * c + 32 + l] = uint8_t((w[b].qs[32 * c + l] >> 4) | (((h >> (2 * c + 1)) & 1) << 4));
            }
        sum += k4_block(q, w[b].scales, w[b].d, w[b].dmin, x[b]);
    }
    return sum;
}

float dot_q6_k(const block_q6_k * w, const block_q8_k * x, int64_t nb) {
    float acc[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
    for (int64_t b = 0; b < nb; ++b) {
        int lane[8];
        for (int l = 0; l < 8; ++l)
            lane[l] = -32 * (int(w[b].scales[2 * l]) * int(x[b].bsums[2 * l]) + int(w[b].scales[2 * l + 1]) * int(x[b].bsums[2 * l + 1]));
        for (int e = 0; e < qk_k; ++e) lane[(e % 32) / 4] += int(w[b].scales[e / 16]) * (quant::q6_k_value(w[b], e) + 32) * int(x[b].qs[e]);
        const float d = x[b].d * quant::fp16_to_fp32(w[b].d);
        for (int l = 0; l < 8; ++l) acc[l] = std::fma(d, float(lane[l]), acc[l]);
    }
    return ((acc[0] + acc[4]) + (acc[2] + acc[6])) + ((acc[1] + acc[5]) + (acc[3] + acc[7]));
}

float dot_q2_k(const block_q2_k * w, const block_q8_k * x, int64_t nb) {
    float sum = 0.0f;
    for (int64_t b = 0; b < nb; ++b) {
        int isum = 0, msum = 0;
        for (int s = 0; s < qk_k / 16; ++s) {
            int dot = 0;
            for (int l = 0; l < 16; ++l) dot += quant::q2k_value(w[b].qs, 16 * s + l) * int(x[b].qs[16 * s + l]);
            isum += int(w[b].scales[s] & 0x0f) * dot;
            msum += int(w[b].scales[s] >> 4) * int(x[b].bsums[s]);
        }
        sum += x[b].d * quant::fp16_to_fp32(w[b].d) * float(isum) - x[b].d * quant::fp16_to_fp32(w[b].dmin) * float(msum);
    }
    return sum;
}

float dot_q3_k(const block_q3_k * w, const block_q8_k * x, int64_t nb) {
    float sum = 0.0f;
    for (int64_t b = 0; b < nb; ++b) {
        int8_t sc[16];
        quant::unpack_q3k_scales(w[b].scales, sc);
        int isum = 0;
        for (int s = 0; s < qk_k / 16; ++s) {
            int dot = 0;
            for (int l = 0; l < 16; ++l) dot += quant::q3k_value(w[b], 16 * s + l) * int(x[b].qs[16 * s + l]);
            isum += int(sc[s]) * dot;
        }
        sum += x[b].d * quant::fp16_to_fp32(w[b].d) * float(isum);
    }
    return sum;
}

float dot_iq4_xs(const block_iq4_xs * w, const block_q8_k * x, int64_t nb) {
    float sum = 0.0f;
    for (int64_t b = 0; b < nb; ++b) {
        int isum = 0;
        for (int j = 0; j < qk_k / 32; ++j) {
            const uint8_t * qs = w[b].qs + 16 * j;
            const int8_t * xq = x[b].qs + 32 * j;
            int dot = 0;
            for (int l = 0; l < 16; ++l) {
                dot += int(quant::k_iq4nl_values[qs[l] & 0x0f]) * int(xq[l]);
                dot += int(quant::k_iq4nl_values[qs[l] >> 4]) * int(xq[l + 16]);
            }
            isum += (quant::iq4xs_scale(w[b], j) - 32) * dot;
        }
        sum += x[b].d * quant::fp16_to_fp32(w[b].d) * float(isum);
    }
    return sum;
}
} // namespace

TM_MATMUL_ROWS_ENTRY(matmul_q4_k, quant_rows<block_q4_k, block_q8_k, qk_k, dot_q4_k>)
TM_MATMUL_ROWS_ENTRY(matmul_q4_k_x16, rows_q4_k_x16)
TM_MATMUL_ROWS_ENTRY(matmul_q5_k, quant_rows<block_q5_k, block_q8_k, qk_k, dot_q5_k>)
TM_MATMUL_ROWS_ENTRY(matmul_q6_k, quant_rows<block_q6_k, block_q8_k, qk_k, dot_q6_k>)
TM_MATMUL_ROWS_ENTRY(matmul_q2_k, quant_rows<block_q2_k, block_q8_k, qk_k, dot_q2_k>)
TM_MATMUL_ROWS_ENTRY(matmul_q3_k, quant_rows<block_q3_k, block_q8_k, qk_k, dot_q3_k>)
TM_MATMUL_ROWS_ENTRY(matmul_iq4_xs, quant_rows<block_iq4_xs, block_q8_k, qk_k, dot_iq4_xs>)

} // namespace tmill::kernels::ref
