// AVX-512's integer dot sequences for the quantized matmul family sources (kernels/simd/matmul-q32.cpp,
// matmul-k.cpp): the block-step kernels for the 32-block types (avx512-block-step.h, avx512-block-step-min.h),
// VNNI dpbusd lane sums on 256-bit registers for matmul-q32.cpp's tiles, and the K-quant super-block tiles
// 64 weights a register.
// Internal linkage, as tiling.h.
#pragma once

#include "kernels/hsum.h"
#include "kernels/simd/avx512-block-step.h"
#include "kernels/simd/avx512-block-step-min.h"
#include "kernels/simd/avx512-nibble-x16.h"
#include "kernels/simd/avx512-q4-k-lanes.h"
#include "kernels/simd/avx512-q6-k-x16.h"
#include "kernels/simd/avx512-q6-k-levels.h"
#include "quant/q4-k.h"
#include "quant/q5-k.h"
#include "quant/q6-k.h"
#include "quant/q8-0.h"
#include "quant/q8-k.h"

namespace tmill::kernels {
namespace {

struct avx512_int_dots {
    using block_q6_k = quant::block_q6_k;
    using block_q8_0 = quant::block_q8_0;

    static float f16(uint16_t h) { return _cvtsh_ss(h); }

    // Q8_0: the 8 int32 lane sums of w * x over a 32-block, from |w| and x signed by w (one dpbusd).
    static __m256i q8_lanes(__m256i wabs, __m256i wq, __m256i xq) {
        return _mm256_dpbusd_epi32(_mm256_setzero_si256(), wabs, _mm256_sign_epi8(xq, wq));
    }
    // Q4_0, whose weight is an unsigned level u (the nibble) less O = 8: O * sum of each lane's 4 activations, once
    // per activation block ...
    template <int O>
    static __m256i offset_x(__m256i xq) { return _mm256_dpbusd_epi32(_mm256_setzero_si256(), _mm256_set1_epi8(O), xq); }
    // ... and the lane sums of (u - O) * x: u * x - O * x.
    static __m256i offset_lanes(__m256i u, __m256i xq, __m256i xo) {
        return _mm256_sub_epi32(_mm256_dpbusd_epi32(_mm256_setzero_si256(), u, xq), xo);
    }

    // Q8_0, Q4_0, Q5_0 and IQ4_NL, and Q4_1 and Q5_1 with their minimum: the block-step kernels of
    // avx512-block-step.h and avx512-block-step-min.h for every token count (the numerics of the AMX level;
    // kernels/tiling.h int8_block_rows).
    static constexpr bool block_step = true;
    template <typename Block>
    static void block_step_rows(const void * w, size_t wb, const void * x, size_t xb, int64_t n_tok, int64_t n_in, int64_t r0,
                                int64_t r1, float * y, int64_t ldy) {
        block_step_avx512::rows<typename block_step_avx512::format_of<Block>::type>(w, wb, x, xb, n_tok, n_in, r0, r1, y, ldy);
    }

    // Q6_K's float step: the block step's one exact sum per super-block (matmul-k.cpp q6_k_acc, NOTE(q6-k-block-step)).
    static constexpr bool q6_k_block_step = true;
    // Q6_K rows repacked 16 at a time at load: their tiles (avx512-q6-k-x16.h, NOTE(q6-k-x16)) for matmul-k.cpp's
    // 16-row walk.
    using q6_k_x16_tiles = q6_k_x16_avx512::tiles;

    // Q4_K from q4_k_lanes_min_tokens tokens on: 16 tokens in the lanes (avx512-q4-k-lanes.h, NOTE(q4-k-lanes));
    // false when its scratch cannot be allocated. Below 8 tokens matmul-k.cpp's chunks of spread row sets are as
    // fast from memory (a group of up to 8 tokens costs the lanes as much as 8): one 1536 -> 151936 matmul from
    // memory on one thread, AMD EPYC, 5, 6 and 7 tokens 20, 22 and 25 ms in chunks, 8 tokens 23 ms in lanes.
    static constexpr bool q4_k_lanes = true;
    static constexpr int64_t q4_k_lanes_min_tokens = 8;
    static bool q4_k_lanes_rows(const void * w, size_t wb, const void * x, size_t xb, int64_t n_tok, int64_t n_in, int64_t r0,
                                int64_t r1, float * y, int64_t ldy) {
        return q4_k_lanes_avx512::rows(w, wb, x, xb, n_tok, n_in, r0, r1, y, ldy);
    }

    // Q4_K rows repacked 16 at a time at load (matmul-k.cpp's x16 kernel, NOTE(q4-k-x16)): a group's 16 rows in
    // the lanes of a zmm; the quads' unsigned nibbles against a token's quad by dpbusd, exact in int32 lanes.
    static constexpr bool q4_k_x16 = true;
    struct x16 {
        using vi = __m512i;
        static constexpr int rows = 16;         // rows of a group per vector
        static vi zero() { return _mm512_setzero_si512(); }
        static vi add(vi a, vi b) { return _mm512_add_epi32(a, b); }
        static vi quads(const uint8_t * p) { return _mm512_loadu_si512(p); }
        static vi low4(vi q) { return _mm512_and_si512(q, _mm512_set1_epi8(0x0f)); }
        static vi high4(vi q) { return _mm512_and_si512(_mm512_srli_epi16(q, 4), _mm512_set1_epi8(0x0f)); }
        // A sub-block's dot, one quad at a time: int32 lanes.
        static vi dot4(vi acc, vi w, int32_t xq) { return _mm512_dpbusd_epi32(acc, w, _mm512_set1_epi32(xq)); }
        // The dots times the rows' scales (one byte per row), as int32 lanes.
        static vi scaled(vi dot, const uint8_t * sc) {
            return _mm512_mullo_epi32(dot, _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i *>(sc))));
        }
        // The rows' mins m_2i | m_2i+1 << 16, and msum += m_2i * xsum_2i + m_2i+1 * xsum_2i+1 (xs: those words).
        static vi min_pairs(const uint8_t * even, const uint8_t * odd) {
            const auto lanes = [](const uint8_t * p) { return _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i *>(p))); };
            return _mm512_or_si512(lanes(even), _mm512_slli_epi32(lanes(odd), 16));
        }
        static vi add_mins(vi msum, vi pairs, int32_t xs) { return _mm512_dpwssd_epi32(msum, pairs, _mm512_set1_epi32(xs)); }
        static __m512 to_f32(vi v) { return _mm512_cvtepi32_ps(v); }
    };

    static float hsum16(__m512 v) {
        return hsum8(_mm256_add_ps(_mm512_castps512_ps256(v), _mm512_extractf32x8_ps(v, 1)));
    }

    static __m256i load256(const void * p) { return _mm256_loadu_si256(static_cast<const __m256i *>(p)); }
    static __m512i load512(const void * p) { return _mm512_loadu_si512(p); }

    // The same 32 bytes in both halves of a zmm.
    static __m512i twice(__m256i v) { return _mm512_broadcast_i64x4(v); }

    // Word indices for vpermw: words 0..15 take a, words 16..31 take b.
    static __m512i halves_index(int a, int b) {
        return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_set1_epi16(short(a))), _mm256_set1_epi16(short(b)), 1);
    }

    // A zmm's 16 int32 lanes folded to 8: lane l + lane l + 8 (exact).
    static __m256i fold8(__m512i v) { return _mm256_add_epi32(_mm512_castsi512_si256(v), _mm512_extracti64x4_epi64(v, 1)); }

    // Q4_K and Q5_K, one row's super-block for T tokens (matmul-k.cpp's tile_q4_k and tile_q5_k,
    // NOTE(k-matmul-tiles)): 16 exact int32 lanes per token whose sum is sum_j sc_j * dot_j. 64 weights a
    // register: a 32-byte chunk's low nibbles (sub-block 2c) in the low half, its high nibbles (2c + 1) in the
    // high half — elements 64c .. 64c+63, the order of the activations — for Q5_K (FIFTH) with their fifth bits
    // (chunk c takes bit 2c of qh in the low half, 2c + 1 in the high half), maddubs by the activations, VNNI
    // dpwssd by the 16-bit scales. sm: the scales in bytes 0..7. Q4_K folds the lanes to 8 (fold8); Q5_K's
    // 16-lane float accumulator (q5_k_acc) takes them as they are.
    using k_lanes_t = __m512i;
    template <int T, bool FIFTH>
    static void k_lanes(const uint8_t * qs, const uint8_t * qh, __m128i sm, const int8_t * const * xq, __m512i * out) {
        const __m512i low4 = _mm512_set1_epi8(0x0f);
        const __m512i one = _mm512_set1_epi8(1);
        const __m512i scw = _mm512_castsi256_si512(_mm256_cvtepu8_epi16(sm));
        __m512i h = _mm512_setzero_si512();
        if (FIFTH) {
            h = twice(load256(qh));
            h = _mm512_mask_srli_epi16(h, 0xFFFF0000u, h, 1);
        }
        for (int t = 0; t < T; ++t) out[t] = _mm512_setzero_si512();
        for (int c = 0; c < 4; ++c) {
            const __m512i q = twice(load256(qs + 32 * c));
            __m512i wq = _mm512_and_si512(_mm512_mask_srli_epi16(q, 0xFFFF0000u, q, 4), low4);
            if (FIFTH) {
                wq = _mm512_or_si512(wq, _mm512_slli_epi16(_mm512_and_si512(h, one), 4));
                h = _mm512_srli_epi16(h, 2);
            }
            // Sub-block 2c's scale in the low half, 2c + 1's in the high half.
            const __m512i scv = _mm512_permutexvar_epi16(halves_index(2 * c, 2 * c + 1), scw);
            for (int t = 0; t < T; ++t) out[t] = _mm512_dpwssd_epi32(out[t], _mm512_maddubs_epi16(wq, load512(xq[t] + 64 * c)), scv);
        }
    }

    // Q5_K's float accumulators of an R x T tile (NOTE(k-matmul)): per (row, token) a 16-lane FMA of k_lanes'
    // lanes with d_x * d_w and an 8-lane FMA of the min lanes m_j * xsum_j with d_x * dmin_w; hsum16 of the
    // first minus hsum8 of the second at the end.
    template <int R, int T>
    struct q5_k_acc {
        __m512 scaled[R][T];
        tile_acc<R, T> mins;
        q5_k_acc() {
            for (int r = 0; r < R; ++r)
                for (int t = 0; t < T; ++t) scaled[r][t] = _mm512_setzero_ps();
        }
        void add(int r, int t, float dd, __m512i lanes, float dm, __m256i mlanes) {
            scaled[r][t] = _mm512_fmadd_ps(_mm512_set1_ps(dd), _mm512_cvtepi32_ps(lanes), scaled[r][t]);
            mins.v[r][t] = _mm256_fmadd_ps(_mm256_set1_ps(dm), _mm256_cvtepi32_ps(mlanes), mins.v[r][t]);
        }
        void store(float * y, int64_t ldy) const {
            for (int r = 0; r < R; ++r)
                for (int t = 0; t < T; ++t) y[t * ldy + r] = hsum16(scaled[r][t]) - hsum8(mins.v[r][t]);
        }
    };

    // Q6_K, one row's super-block for T tokens (matmul-k.cpp's tile_q6_k): adds to each token's lanes ggml's 8
    // lanes of sc * (q + 32) * x. 64 weights a register (each zmm half a 32-element chunk), maddubs of the
    // unsigned 6-bit values q + 32, VNNI dpwssd by the 16-bit scales; the 16 lanes are folded to ggml's 8 at the
    // end (lanes l and l + 8 cover the same bytes of their chunks).
    template <int T>
    static void q6_k_lanes(const block_q6_k * w, const int8_t * const * xq, __m256i * lanes) {
        // Scale words of 64-element group g (of 4): one scale per 16 elements, so word i takes scale 4g + i / 8.
        const __m512i group_index = _mm512_cvtepu8_epi16(
            _mm256_setr_epi64x(0x0000000000000000, 0x0101010101010101, 0x0202020202020202, 0x0303030303030303));
        const __m512i scw = _mm512_castsi256_si512(_mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i *>(w->scales))));
        __m512i isum[T];
        for (int t = 0; t < T; ++t) isum[t] = _mm512_zextsi256_si512(lanes[t]);
        for (int h = 0; h < 2; ++h) {
            __m512i lo, hi;   // elements 128h .. 128h+63 and 128h+64 .. 128h+127
            avx512_vnni::q6_k_levels(*w, h, lo, hi);
            const __m512i sc_lo = _mm512_permutexvar_epi16(_mm512_add_epi16(group_index, _mm512_set1_epi16(short(8 * h))), scw);
            const __m512i sc_hi = _mm512_permutexvar_epi16(_mm512_add_epi16(group_index, _mm512_set1_epi16(short(8 * h + 4))), scw);
            for (int t = 0; t < T; ++t) {
                const int8_t * x = xq[t] + 128 * h;
                isum[t] = _mm512_dpwssd_epi32(isum[t], _mm512_maddubs_epi16(lo, load512(x)), sc_lo);
                isum[t] = _mm512_dpwssd_epi32(isum[t], _mm512_maddubs_epi16(hi, load512(x + 64)), sc_hi);
            }
        }
        for (int t = 0; t < T; ++t) lanes[t] = fold8(isum[t]);
    }

};

} // namespace
} // namespace tmill::kernels
