// The avx2 level's kernels for Q4_1 (quant/q4-1-x16.h, against Q8_1), Q4_0 and IQ4_NL (quant/q4-0-x16.h) and Q5_0
// (quant/q5-0-x16.h, these three against Q8_0) on rows repacked 16 at a time, in llama.cpp's order
// (NOTE(q8-matmul)): bit for bit the level's tiles of the GGUF rows (matmul-q32.cpp), whatever the token count.
// Included by matmul-q32.cpp on the AVX2 level only; internal linkage as tiling.h.
//
// NOTE(nibble-x16-avx2): why. On the GGUF rows one token's tile takes a (row, block) at a time: the 32 nibbles
// unpacked, |w| and x signed by w, the scale product formed from two scalar F16 conversions and broadcast, Q4_1's
// minimum in a scalar chain — about 19 vector operations per 20 bytes of weights, so SmolLM2-135M Q4_1 decoded at
// a third of the read bandwidth on this level. Here a ymm holds 8 rows of the group: a 32-byte half of a line is
// one quad of qs of 8 rows, its low nibbles the int32 lane k of llama.cpp's 8-lane accumulator (elements 4k ..
// 4k + 3) of every row and its high nibbles lane 4 + k, so an accumulator per lane, a row per element, is
// llama.cpp's accumulator transposed: each element sees the same FMA (the same F32 scale product, the same exact
// lane sum) in the same block order, and the final sum of the 8 lane accumulators, element by element, is
// hsum8's order. The token's quad is one broadcast; the 8 rows' scale products one conversion and one multiply,
// Q4_1's minimums one conversion, multiply and add; the unsigned nibbles go straight into maddubs (no signs):
// about 6 operations per row and block. One token takes the group's 16 rows in one pass, 16 accumulators of which
// the compiler keeps half in memory; two passes of 8 rows, all accumulators in registers and the second pass from
// L1, were faster in L2 but read memory in bursts (the first pass) that left decode at half the read bandwidth (AMD
// EPYC, `TOKENMILL_ISA=avx2`, through Engine: a TinyLlama-shape Q4_1 model 26 against 45 tok/s). Two to 4 tokens
// share each line's unpacking in two passes of 8 rows over each chunk of k_chunk_blocks blocks, with fewer lines per
// pass so that the accumulators stay in registers (at most 8, and Q4_1's per-token minimum sums beside them).
// Q5_0's fifth bits are added to each line's nibbles once for all the pass's tokens (add_fifth_bits): about 11
// operations per half line where its GGUF rows decode each (row, block) apart.
#pragma once

#include "kernels/simd/avx2-int-dots.h"
#include "kernels/tiling.h"
#include "quant/iq4-nl.h"
#include "quant/q4-0-x16.h"
#include "quant/q4-1-x16.h"
#include "quant/q5-0-x16.h"
#include "quant/q8-0.h"
#include "quant/q8-1.h"

#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace tmill::kernels {
namespace {
namespace nibble_x16_avx2 {

using quant::k_x16_rows;

constexpr int k_half_rows = 8;    // rows of a ymm of int32 lanes
constexpr int k_lines = 4;        // 64-byte lines of qs per block, each holding two quads of elements
constexpr int k_max_tokens = 4;   // tokens per pass over a group

// A layout L gives: group, line(g, b, k) (line k of block b's qs, 16 rows x 4 bytes), d(g, b) and with has_min m(g, b)
// (the 16 rows' F16 scales and minimums), with has_fifth qh(g, b) (the 16 rows' 32-bit words of fifth bits) — the
// quant layout's own accessors, which it derives from —, act (the activations' block), has_min, has_fifth, and the
// exact int32 lane sums of 8 rows' quads of unsigned levels n (bytes 0 .. 15: the nibbles, with has_fifth and their
// fifth bits) against a token's quad, as the level's tiles form them from the decoded weights (avx2_int_dots),
// without decoding where that is exact: of_token(xq) prepares the quad (broadcast) once for every row, lanes(n,
// token) takes the rows.
// Q4_1: the weight is the nibble, unsigned.
struct q4_1_layout : quant::q4_1_x16_access {
    using act = quant::block_q8_1;
    static constexpr bool has_min = true;
    static constexpr bool has_fifth = false;
    struct token { __m256i xq; };
    static token of_token(__m256i xq) { return {xq}; }
    static __m256i lanes(__m256i n, const token & t) { return avx2_int_dots::unsigned_lanes(n, t.xq); }
};
// The weight n - O of an unsigned level n: its pair sums n * x less O * x.
template <int O>
struct offset_levels {
    struct token { __m256i xq, xo; };
    static token of_token(__m256i xq) { return {xq, avx2_int_dots::offset_x<O>(xq)}; }
    static __m256i lanes(__m256i n, const token & t) { return avx2_int_dots::offset_lanes(n, t.xq, t.xo); }
};
// Q4_0: the weight n - 8, n the nibble.
struct q4_0_layout : quant::q4_0_x16_access, offset_levels<8> {
    using act = quant::block_q8_0;
    static constexpr bool has_min = false;
    static constexpr bool has_fifth = false;
};
// Q5_0: the weight n - 16, n the nibble and the fifth bit.
struct q5_0_layout : quant::q5_0_x16_access, offset_levels<16> {
    using act = quant::block_q8_0;
    static constexpr bool has_min = false;
    static constexpr bool has_fifth = true;
};
// IQ4_NL: the weight the table's level (a byte shuffle), signed: |w| against x signed by w.
struct iq4_nl_layout : q4_0_layout {
    struct token { __m256i xq; };
    static token of_token(__m256i xq) { return {xq}; }
    static __m256i lanes(__m256i n, const token & t) {
        const __m256i table = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i *>(quant::k_iq4nl_values)));
        const __m256i w = _mm256_shuffle_epi8(table, n);
        return avx2_int_dots::q8_lanes(_mm256_sign_epi8(w, w), w, t.xq);
    }
};

// Q5_0: the fifth bits of 8 rows' elements 4k .. 4k + 3 (lo: line k's low nibbles) and 16 + 4k .. 16 + 4k + 3 (hi: its
// high nibbles) — bits 4k .. 4k + 3 and 16 + 4k .. 16 + 4k + 3 of each row's word of qh, an int32 lane a row — as bit 4
// of those elements' bytes: the lane's byte holding the 4 bits copied to its 4 bytes, each byte tested for its own.
inline void add_fifth_bits(__m256i & lo, __m256i & hi, const uint8_t * qh, int k) {
    const __m256i bits = _mm256_srl_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(qh)), _mm_cvtsi32_si128(4 * k));
    const __m256i byte0 = _mm256_setr_epi8(0, 0, 0, 0, 4, 4, 4, 4, 8, 8, 8, 8, 12, 12, 12, 12, 0, 0, 0, 0, 4, 4, 4, 4, 8, 8, 8, 8, 12, 12, 12, 12);
    const __m256i byte2 = _mm256_add_epi8(byte0, _mm256_set1_epi8(2));
    const __m256i own = _mm256_set1_epi32(0x08040201);
    const __m256i fifth = _mm256_set1_epi8(0x10);
    const auto set = [&](__m256i pattern) {
        return _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(_mm256_shuffle_epi8(bits, pattern), own), own), fifth);
    };
    lo = _mm256_or_si256(lo, set(byte0));
    hi = _mm256_or_si256(hi, set(byte2));
}

// Quad k (bytes 4k .. 4k + 3) of a token's block, in every int32 lane.
inline __m256i token_quad(const int8_t * qs, int k) {
    int32_t v;
    std::memcpy(&v, qs + 4 * k, sizeof v);
    return _mm256_set1_epi32(v);
}

// Blocks [b0, b1) of lines [k0, k0 + Lines) of halves h0 .. h0 + Halves - 1 (half h: rows 8h .. 8h + 7) of the group
// g against T tokens (x, rows xb bytes apart), in block order, continuing the accumulators: lane[h][k][t] (elements
// 4k .. 4k + 3) and lane[h][4 + k][t] (16 + 4k ..) of each row, a row per element; with k0 = 0 and a minimum, also each
// row's sum of m_w * s_x per token in mins[h][t]. Each token's quad is prepared once for the pass's halves.
template <typename L, int T, int Lines, int Halves>
void pass(const typename L::group * g, int64_t b0, int64_t b1, const char * x, size_t xb, int h0, int k0,
          __m256 (*lane)[2 * k_lines][T], __m256 (*mins)[T]) {
    using A = typename L::act;
    __m256 acc[Halves][2 * Lines][T], msum[Halves][T];
    for (int h = 0; h < Halves; ++h)
        for (int t = 0; t < T; ++t) {
            msum[h][t] = mins[h][t];
            for (int j = 0; j < Lines; ++j) {
                acc[h][2 * j][t] = lane[h][k0 + j][t];
                acc[h][2 * j + 1][t] = lane[h][k_lines + k0 + j][t];
            }
        }
    const bool with_min = L::has_min && k0 == 0;
    const __m256i low4 = _mm256_set1_epi8(0x0f);
    for (int64_t b = b0; b < b1; ++b) {
        const A * xs[T];
        for (int t = 0; t < T; ++t) xs[t] = reinterpret_cast<const A *>(x + size_t(t) * xb) + b;
        __m256 scale[Halves][T];
        for (int h = 0; h < Halves; ++h) {
            const int half = h0 + h;
            const __m256 dw = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i *>(L::d(g, b) + k_half_rows * half)));
            for (int t = 0; t < T; ++t) scale[h][t] = _mm256_mul_ps(dw, _mm256_set1_ps(_cvtsh_ss(xs[t]->d)));
            if constexpr (L::has_min) {
                if (with_min) {
                    const __m256 mw = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i *>(L::m(g, b) + k_half_rows * half)));
                    for (int t = 0; t < T; ++t) msum[h][t] = _mm256_add_ps(msum[h][t], _mm256_mul_ps(mw, _mm256_set1_ps(_cvtsh_ss(xs[t]->s))));
                }
            }
        }
        for (int j = 0; j < Lines; ++j) {
            const int k = k0 + j;
            __m256i lo[Halves], hi[Halves];
            for (int h = 0; h < Halves; ++h) {
                const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(L::line(g, b, k) + 4 * k_half_rows * (h0 + h)));
                lo[h] = _mm256_and_si256(q, low4);
                hi[h] = _mm256_and_si256(_mm256_srli_epi16(q, 4), low4);
                if constexpr (L::has_fifth) add_fifth_bits(lo[h], hi[h], L::qh(g, b) + 4 * k_half_rows * (h0 + h), k);
            }
            for (int t = 0; t < T; ++t) {
                const typename L::token tl = L::of_token(token_quad(xs[t]->qs, k)), th = L::of_token(token_quad(xs[t]->qs, k_lines + k));
                for (int h = 0; h < Halves; ++h) {
                    acc[h][2 * j][t] = _mm256_fmadd_ps(scale[h][t], _mm256_cvtepi32_ps(L::lanes(lo[h], tl)), acc[h][2 * j][t]);
                    acc[h][2 * j + 1][t] = _mm256_fmadd_ps(scale[h][t], _mm256_cvtepi32_ps(L::lanes(hi[h], th)), acc[h][2 * j + 1][t]);
                }
            }
        }
    }
    for (int h = 0; h < Halves; ++h)
        for (int t = 0; t < T; ++t) {
            for (int j = 0; j < Lines; ++j) {
                lane[h][k0 + j][t] = acc[h][2 * j][t];
                lane[h][k_lines + k0 + j][t] = acc[h][2 * j + 1][t];
            }
            if (with_min) mins[h][t] = msum[h][t];
        }
}

// Blocks a chunk of several tokens' group_rows takes through all its passes before the next: the chunk's lines stay in
// L1, and the group is read from memory once, in order. With whole groups a pass, the first pass read one line in
// four from memory and the later ones missed the rest: 4 streams of a TinyLlama-shape Q4_0 model ran ~15 % slower
// than on the GGUF rows. Chunks of 8 against 4 and 16 (AMD EPYC, `TOKENMILL_ISA=avx2`, through Engine): that model's
// 4 streams 40-42 tok/s against 46-47 and 35-36; SmolLM2-135M Q4_1's 256-token prompt 590-650 against 575-630 and
// ~595, its 16 streams 345-360 against 300-350 and 305-315 — the accumulators' round trips between passes cost a
// small model's rows more than the stream order gains.
constexpr int64_t k_chunk_blocks = 8;

// The 16 rows of group g x T tokens: y[t * ldy + r]. Chunk by chunk (chunk blocks), the passes of Halves halves and
// Lines lines; then each row's lanes summed in hsum8's order, ((l0 + l4) + (l2 + l6)) + ((l1 + l5) + (l3 + l7)),
// plus its minimums' sum. One token: one pass of both halves and every line over the whole group (chunk nb). With
// next, each chunk's blocks of the next group are asked into L2 (NOTE(nibble-x16-avx2-prefetch)).
template <typename L, int T, int Lines, int Halves>
void group_rows(const typename L::group * g, int64_t nb, int64_t chunk, const char * x, size_t xb, float * y, int64_t ldy,
                const typename L::group * next) {
    constexpr int halves = k_x16_rows / k_half_rows;
    __m256 lane[halves][2 * k_lines][T], mins[halves][T];
    for (int h = 0; h < halves; ++h)
        for (int t = 0; t < T; ++t) {
            mins[h][t] = _mm256_setzero_ps();
            for (int j = 0; j < 2 * k_lines; ++j) lane[h][j][t] = _mm256_setzero_ps();
        }
    for (int64_t b0 = 0; b0 < nb; b0 += chunk) {
        const int64_t b1 = std::min(nb, b0 + chunk);
        if (next)
            for (const char * p = reinterpret_cast<const char *>(next + b0); p < reinterpret_cast<const char *>(next + b1); p += 64)
                _mm_prefetch(p, _MM_HINT_T1);
        for (int h0 = 0; h0 < halves; h0 += Halves)
            for (int k0 = 0; k0 < k_lines; k0 += Lines) pass<L, T, Lines, Halves>(g, b0, b1, x, xb, h0, k0, lane + h0, mins + h0);
    }
    for (int h = 0; h < halves; ++h)
        for (int t = 0; t < T; ++t) {
            const auto & l = lane[h];
            const __m256 even = _mm256_add_ps(_mm256_add_ps(l[0][t], l[4][t]), _mm256_add_ps(l[2][t], l[6][t]));
            const __m256 odd = _mm256_add_ps(_mm256_add_ps(l[1][t], l[5][t]), _mm256_add_ps(l[3][t], l[7][t]));
            _mm256_storeu_ps(y + t * ldy + k_half_rows * h, _mm256_add_ps(_mm256_add_ps(even, odd), mins[h][t]));
        }
}

// The matmul_rows_kernel of layout L: rows [r0, r1) (multiples of 16) x tokens [0, n_tok), cache blocked as the
// tiles of the GGUF rows are (NOTE(tiling)), each group's tokens 4 at a time.
//
// NOTE(nibble-x16-avx2-prefetch): with more than 4 tokens in a block, the first 4 read the group from memory and
// ask the next group of the range into L2 chunk by chunk as they go (the later tokens find their group in cache):
// the scratch one-matmul program, TinyLlama-shape Q4_0 2048 -> 5632 from memory, 2 threads, AMD EPYC (Zen 4): 8
// tokens 61-64 -> 72-73 G multiply-adds a second, 16 tokens 68-70 -> 73, 64 tokens within 2 %. Past the range a
// prefetch only costs a read.
template <typename L>
void rows(const void * w, size_t wb, const void * x, size_t xb, int64_t n_tok, int64_t n_in, int64_t r0, int64_t r1, float * y,
          int64_t ldy) {
    const int64_t nb = n_in / quant::qk8_0;
    const char * wc = static_cast<const char *>(w);
    const char * xc = static_cast<const char *>(x);
    cache_blocks(wb, xb, n_tok, r0, r1, k_x16_rows, [&](int64_t t0, int64_t t1, int64_t p0, int64_t p1) {
        for (int64_t r = p0; r < p1; r += k_x16_rows) {
            const auto * g = reinterpret_cast<const typename L::group *>(wc + size_t(r) * wb);
            for (int64_t t = t0; t < t1; t += k_max_tokens) {
                const char * xt = xc + size_t(t) * xb;
                float * yt = y + t * ldy + r;
                const typename L::group * next = t == t0 && t1 - t0 > k_max_tokens ? g + nb : nullptr;
                switch (std::min<int64_t>(k_max_tokens, t1 - t)) {
                    case 1: group_rows<L, 1, k_lines, 2>(g, nb, nb, xt, xb, yt, ldy, next); break;
                    case 2: group_rows<L, 2, 2, 1>(g, nb, k_chunk_blocks, xt, xb, yt, ldy, next); break;
                    case 3: group_rows<L, 3, 1, 1>(g, nb, k_chunk_blocks, xt, xb, yt, ldy, next); break;
                    default: group_rows<L, 4, 1, 1>(g, nb, k_chunk_blocks, xt, xb, yt, ldy, next); break;
                }
            }
        }
    });
}

} // namespace nibble_x16_avx2
} // namespace
} // namespace tmill::kernels
