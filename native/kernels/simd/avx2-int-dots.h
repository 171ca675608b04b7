// AVX2's integer dot sequences for the quantized matmul family sources (kernels/simd/matmul-q32.cpp,
// matmul-k.cpp): how a block's int32 lane sums are formed (maddubs of unsigned by signed bytes, then madd),
// and the K-quant super-block tiles. Internal linkage, as tiling.h.
#pragma once

#include "kernels/hsum.h"
#include "quant/q4-k.h"
#include "quant/q5-k.h"
#include "quant/q6-k.h"
#include "quant/q8-k.h"

#include <cmath>

#include <immintrin.h>

namespace tmill::kernels {
namespace {

struct avx2_int_dots {
    using block_q6_k = quant::block_q6_k;

    static __m256i load256(const void * p) { return _mm256_loadu_si256(static_cast<const __m256i *>(p)); }

    // Q8_0: the 8 int32 lane sums of w * x over a 32-block, from |w| and x signed by w (|w| <= 128 times
    // |x| <= 127, pair-summed by maddubs, stays below 2^15).
    static __m256i q8_lanes(__m256i wabs, __m256i wq, __m256i xq) {
        return _mm256_madd_epi16(_mm256_maddubs_epi16(wabs, _mm256_sign_epi8(xq, wq)), _mm256_set1_epi16(1));
    }
    // Unsigned weights wu of at most 15 (Q4_1's nibbles in their 16-row layout, kernels/simd/avx2-nibble-x16.h): the lane
    // sums of wu * x straight from maddubs (a pair at most 2 * 15 * 127).
    static __m256i unsigned_lanes(__m256i wu, __m256i xq) { return _mm256_madd_epi16(_mm256_maddubs_epi16(wu, xq), _mm256_set1_epi16(1)); }
    // Q4_0 and Q5_0, whose weight is an unsigned level u less O (Q4_0: the nibble, O = 8; Q5_0: the nibble and the
    // fifth bit, O = 16): O * x pair-summed (int16 lanes), once per activation block ...
    template <int O>
    static __m256i offset_x(__m256i xq) { return _mm256_maddubs_epi16(_mm256_set1_epi8(O), xq); }
    // ... and the lane sums of (u - O) * x: u * x - O * x (u at most 31: a pair at most 2 * 31 * 127).
    static __m256i offset_lanes(__m256i u, __m256i xq, __m256i xo) {
        return _mm256_madd_epi16(_mm256_sub_epi16(_mm256_maddubs_epi16(u, xq), xo), _mm256_set1_epi16(1));
    }
    // Q8_0, Q4_0, Q5_0, IQ4_NL, Q4_1 and Q5_1 keep llama.cpp's order (NOTE(q8-matmul)), bitwise llama.cpp's AVX2 build:
    // the generic tiles serve every shape (no block-step kernels, kernels/tiling.h int8_block_rows).
    static constexpr bool block_step = false;
    // Q6_K keeps llama.cpp's 8-lane float step (matmul-k.cpp q6_k_acc).
    static constexpr bool q6_k_block_step = false;
    // Q4_K keeps matmul-k.cpp's tiles for every token count (no 16-token lanes: avx512-q4-k-lanes.h).
    static constexpr bool q4_k_lanes = false;
    // Q4_K rows repacked 16 at a time at load (matmul-k.cpp's x16 kernel, NOTE(q4-k-x16)): half a group, 8 rows,
    // in the lanes of a ymm; a sub-block's 8 quads summed in int16 lanes (maddubs of the unsigned nibbles by the
    // token's quad: each pair at most 2 * 15 * 128, the 8 quads 30720 < 2^15), then one madd by the rows' scales
    // (each in both words of its lane) gives the exact int32 lanes.
    static constexpr bool q4_k_x16 = true;
    struct x16 {
        using vi = __m256i;
        static constexpr int rows = 8;
        static vi zero() { return _mm256_setzero_si256(); }
        static vi add(vi a, vi b) { return _mm256_add_epi32(a, b); }
        static vi quads(const uint8_t * p) { return load256(p); }
        static vi low4(vi q) { return _mm256_and_si256(q, _mm256_set1_epi8(0x0f)); }
        static vi high4(vi q) { return _mm256_and_si256(_mm256_srli_epi16(q, 4), _mm256_set1_epi8(0x0f)); }
        static vi dot4(vi acc, vi w, int32_t xq) { return _mm256_add_epi16(acc, _mm256_maddubs_epi16(w, _mm256_set1_epi32(xq))); }
        static vi bytes8(const uint8_t * p) { return _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i *>(p))); }
        static vi scaled(vi dot, const uint8_t * sc) {
            const vi s = bytes8(sc);
            return _mm256_madd_epi16(dot, _mm256_or_si256(s, _mm256_slli_epi32(s, 16)));
        }
        static vi min_pairs(const uint8_t * even, const uint8_t * odd) { return _mm256_or_si256(bytes8(even), _mm256_slli_epi32(bytes8(odd), 16)); }
        static vi add_mins(vi msum, vi pairs, int32_t xs) { return _mm256_add_epi32(msum, _mm256_madd_epi16(pairs, _mm256_set1_epi32(xs))); }
        static __m256 to_f32(vi v) { return _mm256_cvtepi32_ps(v); }
    };

    // The K-quant lanes below pass each token's running sum through this empty asm, which takes v and gives it
    // back in a register, so the add that made it happens there. Without it GCC 12's expansion (TER,
    // -ftree-ter) moves a super-block's adds after all its products and keeps the products in stack slots
    // (Q6_K's 1-row 4-token tile: 70 vector stack accesses, 14 with it, and 1.2-1.3x faster).
    static void in_register(__m256i & v) { __asm__("" : "+x"(v)); }

    // Q4_K and Q5_K, one row's super-block for T tokens (matmul-k.cpp's tile_q4_k and tile_q5_k,
    // NOTE(k-matmul-tiles)): 8 exact int32 lanes per token whose sum is sum_j sc_j * dot_j. Per 32-byte chunk c
    // the low nibbles (sub-block 2c) and the high nibbles (2c + 1) — for Q5_K (FIFTH) with their fifth bits, bits
    // 2c and 2c + 1 of qh — maddubs of unsigned weights by signed activations, madd by the sub-block's 16-bit
    // scale (broadcast from the scale words by a byte shuffle). sm: the scales in bytes 0..7. Q5_K's 8-lane
    // float accumulator (q5_k_acc) takes the lanes as they are.
    using k_lanes_t = __m256i;
    template <int T, bool FIFTH>
    static void k_lanes(const uint8_t * qs, const uint8_t * qh, __m128i sm, const int8_t * const * xq, __m256i * out) {
        const __m256i low4 = _mm256_set1_epi8(0x0f);
        const __m256i one = _mm256_set1_epi8(1);
        const __m256i scw = _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(sm));
        __m256i h = FIFTH ? load256(qh) : _mm256_setzero_si256();
        for (int t = 0; t < T; ++t) out[t] = _mm256_setzero_si256();
        for (int c = 0; c < 4; ++c) {
            const __m256i q = load256(qs + 32 * c);
            __m256i lo = _mm256_and_si256(q, low4);
            __m256i hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), low4);
            if (FIFTH) {
                lo = _mm256_or_si256(lo, _mm256_slli_epi16(_mm256_and_si256(h, one), 4));
                hi = _mm256_or_si256(hi, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(h, 1), one), 4));
                h = _mm256_srli_epi16(h, 2);
            }
            const __m256i s_lo = _mm256_shuffle_epi8(scw, _mm256_set1_epi16(short(0x0101 * (4 * c) + 0x0100)));
            const __m256i s_hi = _mm256_shuffle_epi8(scw, _mm256_set1_epi16(short(0x0101 * (4 * c + 2) + 0x0100)));
            for (int t = 0; t < T; ++t) {
                const __m256i pl = _mm256_madd_epi16(_mm256_maddubs_epi16(lo, load256(xq[t] + 64 * c)), s_lo);
                const __m256i ph = _mm256_madd_epi16(_mm256_maddubs_epi16(hi, load256(xq[t] + 64 * c + 32)), s_hi);
                out[t] = _mm256_add_epi32(out[t], _mm256_add_epi32(pl, ph));
                in_register(out[t]);
            }
        }
    }
    // k_lanes' lanes as the 8 lanes Q4_K reduces: already 8 on AVX2.
    static __m256i fold8(__m256i v) { return v; }

    // Q5_K's float accumulators of an R x T tile (NOTE(k-matmul)): per (row, token) an 8-lane FMA of k_lanes'
    // lanes with d_x * d_w, and the mins in a float scalar, fma(d_x * dmin_w, msum, mins) with msum the exact sum
    // of the 8 lanes m_j * xsum_j; hsum8 of the lanes minus the mins at the end.
    template <int R, int T>
    struct q5_k_acc {
        tile_acc<R, T> scaled;
        float mins[R][T] = {};
        void add(int r, int t, float dd, __m256i lanes, float dm, __m256i mlanes) {
            scaled.v[r][t] = _mm256_fmadd_ps(_mm256_set1_ps(dd), _mm256_cvtepi32_ps(lanes), scaled.v[r][t]);
            __m128i s = _mm_add_epi32(_mm256_castsi256_si128(mlanes), _mm256_extracti128_si256(mlanes, 1));
            s = _mm_add_epi32(s, _mm_unpackhi_epi64(s, s));
            s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 1));
            mins[r][t] = std::fma(dm, float(_mm_cvtsi128_si32(s)), mins[r][t]);
        }
        void store(float * y, int64_t ldy) const {
            for (int r = 0; r < R; ++r)
                for (int t = 0; t < T; ++t) y[t * ldy + r] = hsum8(scaled.v[r][t]) - mins[r][t];
        }
    };

    // Q6_K, one row's super-block for T tokens (matmul-k.cpp's tile_q6_k): adds to each token's lanes ggml's 8
    // lanes of sc * (q + 32) * x — lane l the bytes 4l..4l+3 of each 32-element chunk — by maddubs of the
    // unsigned 6-bit values q + 32 and madd by the chunk's two 16-bit scales (the low half's 16 elements take
    // scale s, the high half's s + 1), broadcast from the scale words by one byte shuffle: the words hold the
    // even scales in the low half and the odd ones in the high half.
    template <int T>
    static void q6_k_lanes(const block_q6_k * w, const int8_t * const * xq, __m256i * lanes) {
        const __m256i low4 = _mm256_set1_epi8(0x0f);
        const __m256i bits45 = _mm256_set1_epi8(0x30);
        const __m128i even_odd = _mm_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15);
        const __m256i scw = _mm256_cvtepi8_epi16(_mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i *>(w->scales)), even_odd));
        for (int h = 0; h < 2; ++h) {
            const __m256i ql0 = load256(w->ql + 64 * h);
            const __m256i ql1 = load256(w->ql + 64 * h + 32);
            const __m256i qh = load256(w->qh + 32 * h);
            // qh's bit pair 2g of each byte shifted straight to bits 4 and 5 (the 16-bit shifts move other bits
            // across bytes only outside them), one shift and one mask where shift, mask and shift back took three.
            __m256i q[4];
            q[0] = _mm256_or_si256(_mm256_and_si256(ql0, low4), _mm256_and_si256(_mm256_slli_epi16(qh, 4), bits45));
            q[1] = _mm256_or_si256(_mm256_and_si256(ql1, low4), _mm256_and_si256(_mm256_slli_epi16(qh, 2), bits45));
            q[2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql0, 4), low4), _mm256_and_si256(qh, bits45));
            q[3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql1, 4), low4), _mm256_and_si256(_mm256_srli_epi16(qh, 2), bits45));
            for (int g = 0; g < 4; ++g) {
                // Scales 8h + 2g (word 4h + g of the even half) and 8h + 2g + 1 (of the odd half).
                const int k = 4 * h + g;
                const __m256i scv = _mm256_shuffle_epi8(scw, _mm256_set1_epi16(short(0x0101 * (2 * k) + 0x0100)));
                for (int t = 0; t < T; ++t) {
                    lanes[t] = _mm256_add_epi32(lanes[t], _mm256_madd_epi16(_mm256_maddubs_epi16(q[g], load256(xq[t] + 128 * h + 32 * g)), scv));
                    in_register(lanes[t]);
                }
            }
        }
    }

};

} // namespace
} // namespace tmill::kernels
