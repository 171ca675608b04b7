// The avx512 level's Q4_1 kernels on rows repacked 16 at a time (quant/q4-1-x16.h), with the block step and its
// minimum (kernels/block-step/step.h block_step_min): per (row, token) and block the exact int32 dot c_b of the
// unsigned levels with the activations, acc = fma(d_w * d_x, float(c_b), acc), then acc = fma(m_w, s_x, acc) — the
// bits of block_step_ref::matmul_q4_1 on the original rows, whatever the kernel. Included by avx512-int-dots.h
// only (AVX-512 + VNNI), internal linkage as tiling.h.
//
// NOTE(q4-1-x16): why. On the GGUF rows a token's block steps are scalar: per (row, block) the 8 lane sums of a
// dpbusd reduced to one, the scale product and the minimum pulled out of their lanes, two dependent FMAs — about
// 6 cycles per (row, block) on the AMD EPYC (Zen 4), so Q4_1 decode read its weights at about half the
// bandwidth (block_step_avx512::row_dots, four rows together). Here a row is a lane: one 64-byte load holds the
// same quad of qs of the group's 16 rows, its low nibbles are elements 4k .. 4k + 3 and its high nibbles 16 + 4k
// .. + 3, each one dpbusd against the token's quad (broadcast) with nothing to reduce, and the block's steps are
// two 16-lane FMAs: about a third of a cycle per (row, block) from L2. Prompts and batches of more than
// k_decode_max_tokens keep the block step's 16-token prompt tile: the panel's int8 weights are decoded from the
// groups (q4_1_x16_format::prepare_panel) instead of from the rows.
#pragma once

#include "kernels/simd/avx512-block-step-min.h"
#include "quant/q4-1-x16.h"
#include "quant/q8-1.h"

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace tmill::kernels {
namespace {
namespace q4_1_x16_avx512 {

using quant::block_q4_1_x16;
using quant::block_q8_1;
using quant::k_q4_1_x16_quads;
using quant::k_x16_rows;

// Up to this many tokens take the lanes (each group read once for all of them), more the prompt tile. One 576 ->
// 1536 matmul from L2, one thread, AMD EPYC, ns per (row, block, token): the lanes 0.33 (1 token), 0.25 (2), 0.21
// (4); the prompt tile 0.55-0.6 at 5 to 8 tokens, 0.27 at 16.
constexpr int64_t k_lanes_max_tokens = 8;

// A group's 16 rows x T tokens (token t at x + t * xb, T <= k_lanes_max_tokens): y[t * ldy + r].
// The group's blocks are read once, in order (one forward stream per task, which the hardware prefetcher follows);
// each block's unpacked levels serve the T tokens.
template <int T>
void lanes(const block_q4_1_x16 * w, int64_t nb, const char * x, size_t xb, float * y, int64_t ldy) {
    const __m512i low4 = _mm512_set1_epi8(0x0f);
    const block_q8_1 * xr[T];
    for (int t = 0; t < T; ++t) xr[t] = reinterpret_cast<const block_q8_1 *>(x + size_t(t) * xb);
    __m512 acc[T];
    for (int t = 0; t < T; ++t) acc[t] = _mm512_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
        const block_q4_1_x16 & g = w[b];
        __m512i lo[k_q4_1_x16_quads], hi[k_q4_1_x16_quads];
        for (int k = 0; k < k_q4_1_x16_quads; ++k) {
            const __m512i q = _mm512_loadu_si512(g.qs[k]);
            lo[k] = _mm512_and_si512(q, low4);
            hi[k] = _mm512_and_si512(_mm512_srli_epi16(q, 4), low4);
        }
        const __m512 dw = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(g.d)));
        const __m512 mw = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(g.m)));
        for (int t = 0; t < T; ++t) {
            const block_q8_1 & xb_t = xr[t][b];
            // The low and the high nibbles in two chains (the integer sum is exact, so its order is free).
            __m512i c[2] = {_mm512_setzero_si512(), _mm512_setzero_si512()};
            for (int k = 0; k < k_q4_1_x16_quads; ++k) {
                int32_t xl, xh;
                std::memcpy(&xl, xb_t.qs + 4 * k, 4);
                std::memcpy(&xh, xb_t.qs + quant::qk4_1 / 2 + 4 * k, 4);
                c[0] = _mm512_dpbusd_epi32(c[0], lo[k], _mm512_set1_epi32(xl));
                c[1] = _mm512_dpbusd_epi32(c[1], hi[k], _mm512_set1_epi32(xh));
            }
            const __m512 scale = _mm512_mul_ps(dw, _mm512_set1_ps(_cvtsh_ss(xb_t.d)));
            acc[t] = _mm512_fmadd_ps(scale, _mm512_cvtepi32_ps(_mm512_add_epi32(c[0], c[1])), acc[t]);
            acc[t] = _mm512_fmadd_ps(mw, _mm512_set1_ps(_cvtsh_ss(xb_t.s)), acc[t]);
        }
    }
    for (int t = 0; t < T; ++t) _mm512_storeu_ps(y + t * ldy, acc[t]);
}

// Q4_1's prompt format (block_step_min_avx512::format) on the repacked groups: its panels are whole groups, whose
// rows' levels and entries prepare_panel decodes from the groups (a 16 x 4 dword transpose of each block's qs, a
// nibble split), so the tiles read the same panel as from the GGUF rows.
struct q4_1_x16_format : block_step_min_avx512::format<quant::block_q4_1, block_step_ref::matmul_q4_1_x16> {
    static constexpr int panel_unit = k_x16_rows;

    // Rows w .. w + rows - 1 (rows a multiple of 16, w a group's start; wb the bytes of a row's share of a group).
    static void prepare_panel(const char * w, size_t wb, int64_t rows, int64_t nb, entry * meta, int8_t * staging) {
        static_assert(sizeof(entry) == 8 && staging_bytes == 32, "an entry is a 64-bit lane, a row's block 32 levels");
        const __m512i low4 = _mm512_set1_epi8(0x0f);
        // Quad words of (lo, hi): the levels of rows 4j + i (lo lane j: elements 0..15, hi lane j: 16..31).
        const __m512i rows_0_1 = _mm512_setr_epi64(0, 1, 8, 9, 2, 3, 10, 11), rows_2_3 = _mm512_setr_epi64(4, 5, 12, 13, 6, 7, 14, 15);
        for (int64_t g0 = 0; g0 < rows; g0 += k_x16_rows) {
            const auto * gw = reinterpret_cast<const block_q4_1_x16 *>(w + size_t(g0) * wb);
            for (int64_t b = 0; b < nb; ++b) {
                const block_q4_1_x16 & g = gw[b];
                __m512i a[k_q4_1_x16_quads];
                for (int k = 0; k < k_q4_1_x16_quads; ++k) a[k] = _mm512_loadu_si512(g.qs[k]);
                // 128-bit lane j of u[i]: row 4j + i's 16 qs bytes.
                const __m512i t0 = _mm512_unpacklo_epi32(a[0], a[1]), t1 = _mm512_unpackhi_epi32(a[0], a[1]);
                const __m512i t2 = _mm512_unpacklo_epi32(a[2], a[3]), t3 = _mm512_unpackhi_epi32(a[2], a[3]);
                const __m512i u[4] = {_mm512_unpacklo_epi64(t0, t2), _mm512_unpackhi_epi64(t0, t2), _mm512_unpacklo_epi64(t1, t3),
                                      _mm512_unpackhi_epi64(t1, t3)};
                for (int i = 0; i < 4; ++i) {
                    const __m512i lo = _mm512_and_si512(u[i], low4), hi = _mm512_and_si512(_mm512_srli_epi16(u[i], 4), low4);
                    const __m512i r01 = _mm512_permutex2var_epi64(lo, rows_0_1, hi), r23 = _mm512_permutex2var_epi64(lo, rows_2_3, hi);
                    const __m256i v[4] = {_mm512_castsi512_si256(r01), _mm512_extracti64x4_epi64(r01, 1), _mm512_castsi512_si256(r23),
                                          _mm512_extracti64x4_epi64(r23, 1)};
                    for (int j = 0; j < 4; ++j)
                        _mm256_storeu_si256(reinterpret_cast<__m256i *>(staging + size_t((g0 + 4 * j + i) * nb + b) * staging_bytes), v[j]);
                }
                // Entry r = (d_r, m_r): 128-bit lane j of lo holds rows 4j, 4j + 1, of hi rows 4j + 2, 4j + 3.
                const __m512 d = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(g.d)));
                const __m512 m = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(g.m)));
                const __m512 pairs[2] = {_mm512_unpacklo_ps(d, m), _mm512_unpackhi_ps(d, m)};
                for (int h = 0; h < 2; ++h)
                    for (int j = 0; j < 4; ++j) {
                        const __m128 two = _mm512_extractf32x4_ps(pairs[h], j);
                        _mm_storel_pi(reinterpret_cast<__m64 *>(meta + (g0 + 4 * j + 2 * h) * nb + b), two);
                        _mm_storeh_pi(reinterpret_cast<__m64 *>(meta + (g0 + 4 * j + 2 * h + 1) * nb + b), two);
                    }
            }
        }
    }
};

// The matmul_rows_kernel of the layout: rows [r0, r1) (multiples of 16) x tokens [0, n_tok). Up to
// k_lanes_max_tokens tokens the groups' lanes, each group read once for all of them; more, the prompt tile.
inline void rows(const void * w, size_t wb, const void * x, size_t xb, int64_t n_tok, int64_t n_in, int64_t r0, int64_t r1, float * y,
                 int64_t ldy) {
    if (n_tok <= 0 || r1 <= r0) return;
    const int64_t nb = n_in / quant::qk4_1;
    const char * wc = static_cast<const char *>(w);
    const char * xc = static_cast<const char *>(x);
    if (n_tok > k_lanes_max_tokens) {
        if (!token_lanes_avx512::prompt_rows<q4_1_x16_format>(wc, wb, xc, xb, n_tok, nb, r0, r1, y, ldy))
            q4_1_x16_format::reference(w, wb, x, xb, n_tok, n_in, r0, r1, y, ldy);
        return;
    }
    using lanes_fn = void (*)(const block_q4_1_x16 *, int64_t, const char *, size_t, float *, int64_t);
    static constexpr lanes_fn by_count[] = {nullptr, lanes<1>, lanes<2>, lanes<3>, lanes<4>, lanes<5>, lanes<6>, lanes<7>, lanes<8>};
    static_assert(sizeof by_count / sizeof by_count[0] == k_lanes_max_tokens + 1, "one kernel per token count");
    for (int64_t r = r0; r < r1; r += k_x16_rows)
        by_count[n_tok](reinterpret_cast<const block_q4_1_x16 *>(wc + size_t(r) * wb), nb, xc, xb, y + r, ldy);
}

} // namespace q4_1_x16_avx512
} // namespace
} // namespace tmill::kernels
