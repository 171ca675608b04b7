// The avx512 level's Q6_K kernel on rows repacked 16 at a time (quant/q6-k-x16.h), with Q6_K's block step
// (NOTE(q6-k-block-step), kernels/block-step/step.h block_step_k): per (row, token) and super-block the exact
// isum = sum_j sc_j * sum_e (q_e - 32) * x_e, then acc = fma(float(isum), d_x * d_w, acc) — the bits of
// block_step_ref::matmul_q6_k on the original rows, whatever the tile. Included by avx512-int-dots.h only
// (AVX-512 + VNNI), internal linkage as tiling.h.
//
// NOTE(q6-k-x16): why. The one-row kernel (matmul-k.cpp tile_q6_k) spends a maddubs and a dpwssd on every
// 64 (row, token) multiply-adds, plus each pair's reduction of its lanes: on the AMD EPYC Qwen2.5-Coder-1.5B
// Q4_K_M's prefill took as long in its Q6_K matrices (15 % of the multiply-adds) as half of what the Q4_K ones
// (85 %, repacked: NOTE(q4-k-x16)) took. Here a row is a lane: one 64-byte load of ql quads and one of qh quads
// give a quad of 6-bit levels of 16 rows (an and, a shift and a ternary-logic merge), and one dpbusd of them
// against the token's quad (broadcast) is 64 multiply-adds with nothing to reduce; the -32 offset starts each
// sub-block's chain at -32 * (the token's 16-element sum), and one vpmulld applies the rows' scales per
// sub-block. The integer sums are exact (|isum| < 2^31: step.h), so their order is free.
#pragma once

#include "kernels/tiling.h"
#include "quant/q6-k-x16.h"
#include "quant/q8-k.h"

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace tmill::kernels {
namespace {
namespace q6_k_x16_avx512 {

using quant::block_q6_k_x16;
using quant::block_q8_k;
using quant::qk_k;

// The levels of elements 128h + 32q + 4k .. + 3 of the 16 rows (quant/q6-k.h's layout, q6_k_value), a row per
// int32 lane: quarter q takes the low (q < 2) or high nibbles of ql bytes 64h + 32 (q & 1) + 4k .. + 3 (ql) and
// bit pair q of qh bytes 32h + 4k .. + 3 (qh) as bits 4 and 5.
template <int Q>
inline __m512i levels(__m512i ql, __m512i qh) {
    const __m512i low4 = _mm512_set1_epi8(0x0f), bits45 = _mm512_set1_epi8(0x30);
    // (a & c) | b: the low nibble of a under b's two bits.
    constexpr int merge = 0xec;
    const __m512i lo = Q < 2 ? ql : _mm512_srli_epi16(ql, 4);
    const __m512i hi = Q == 0 ? _mm512_slli_epi16(qh, 4) : Q == 1 ? _mm512_slli_epi16(qh, 2) : Q == 2 ? qh : _mm512_srli_epi16(qh, 2);
    return _mm512_ternarylogic_epi32(lo, _mm512_and_si512(hi, bits45), low4, merge);
}

// One sub-block j = 8h + 2q + half of the group's super-block for T tokens: each token's chain starts at
// -32 * its 16-element sum and takes the 4 quads' dpbusd; the chains times the rows' scales are added to isum.
// The start is broadcast from a general register: read back from a vector stored per super-block, it stalled
// every super-block on the store (the narrow loads cannot be forwarded from the wide store), 3.5 times slower.
template <int T, int H, int Q, int Half>
inline void sub_block(const block_q6_k_x16 & g, const block_q8_k * const * xb, __m512i * isum) {
    constexpr int j = 8 * H + 2 * Q + Half;
    __m512i dot[T];
    for (int t = 0; t < T; ++t) dot[t] = _mm512_set1_epi32(-32 * int32_t(xb[t]->bsums[j]));
    const block_q6_k_x16::half_t & half = g.half[H];
    for (int k = 4 * Half; k < 4 * Half + 4; ++k) {
        const __m512i ql = _mm512_loadu_si512(Q & 1 ? half.ql_high[k] : half.low[k].ql);
        const __m512i qh = _mm512_loadu_si512(half.low[k].qh);
        const __m512i v = levels<Q>(ql, qh);
        for (int t = 0; t < T; ++t) {
            int32_t quad;
            std::memcpy(&quad, xb[t]->qs + 128 * H + 32 * Q + 4 * k, 4);
            dot[t] = _mm512_dpbusd_epi32(dot[t], v, _mm512_set1_epi32(quad));
        }
    }
    const __m512i sc = _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i *>(half.scales[j - 8 * H])));
    for (int t = 0; t < T; ++t) isum[t] = _mm512_add_epi32(isum[t], _mm512_mullo_epi32(dot[t], sc));
}

template <int T, int J>
inline void sub_blocks(const block_q6_k_x16 & g, const block_q8_k * const * xb, __m512i * isum) {
    if constexpr (J < 16) {
        sub_block<T, J / 8, (J / 2) % 4, J % 2>(g, xb, isum);
        sub_blocks<T, J + 1>(g, xb, isum);
    }
}

// The tiles as matmul-k.cpp's 16-row walk takes them: tile<T, NextGroup> computes a group's 16 rows x T tokens
// (token t at x + t * xb): y[t * ldy + r]. first: the chunk of tokens reads the group from memory (a block's first); with
// NextGroup the next group's super-block is then asked into L2 as this one's is read, as the Q4_K rows' tiles do
// (matmul-k.cpp q4_k_x16_tiles, NOTE(q4-k-x16-prefetch): on AMD's cores the table takes them without it for one token).
struct tiles {
    using group = block_q6_k_x16;
    template <int T, bool NextGroup>
    static void tile(const group * w, int64_t nb, const char * x, size_t xb, float * y, int64_t ldy, bool first) {
        const block_q8_k * xr[T];
        for (int t = 0; t < T; ++t) xr[t] = reinterpret_cast<const block_q8_k *>(x + size_t(t) * xb);
        __m512 acc[T];
        for (int t = 0; t < T; ++t) acc[t] = _mm512_setzero_ps();
        const block_q6_k_x16 * next = w + nb;
        for (int64_t b = 0; b < nb; ++b) {
            if (NextGroup && first) prefetch_object<_MM_HINT_T1>(next + b);
            const block_q6_k_x16 & g = w[b];
            const block_q8_k * xb[T];
            __m512i isum[T];
            for (int t = 0; t < T; ++t) {
                xb[t] = xr[t] + b;
                isum[t] = _mm512_setzero_si512();
            }
            sub_blocks<T, 0>(g, xb, isum);
            const __m512 dw = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(g.d)));
            for (int t = 0; t < T; ++t) acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[t]), _mm512_mul_ps(dw, _mm512_set1_ps(xr[t][b].d)), acc[t]);
        }
        for (int t = 0; t < T; ++t) _mm512_storeu_ps(y + t * ldy, acc[t]);
    }
};

} // namespace q6_k_x16_avx512
} // namespace
} // namespace tmill::kernels
