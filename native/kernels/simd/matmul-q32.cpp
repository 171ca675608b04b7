// Matmul rows for the 32-element block formats, once per ISA: Q8_0, Q4_0, Q5_0 and IQ4_NL against Q8_0
// activations, Q4_1 and Q5_1 against Q8_1. On AVX-512 all six take the block-step kernels instead
// (avx512-block-step.h, NOTE(block-step-avx512); avx512-block-step-min.h, NOTE(block-step-min); through
// int8_block_rows); the tiles below serve the AVX2 level on the GGUF rows, and its Q4_1, Q4_0, IQ4_NL and Q5_0 rows
// repacked at load take avx2-nibble-x16.h's kernels of the same bits (NOTE(nibble-x16-avx2)).
//
// NOTE(q8-matmul): llama.cpp's order, the AVX2 level's (and the baseline's, block by block): one 8-lane float
// accumulator per (row, token) pair; block b adds (d_w * d_x) times the block's int32 lane sums
// (acc = fma(d_w * d_x, lanes, acc)), reduced by hsum8 at the end. The lane sums are exact integers, so how
// an ISA or a format forms them is free (int_dots); every pair sees the same float operations in the same
// block order in every tile shape, so a result does not depend on the tile, n_tok or the task split (batch
// invariance).
//
// NOTE(q32-matmul): each weight block is decoded once per (row, block), shared by the tile's tokens: Q8_0
// its bytes, Q5_0 the nibble and fifth bit minus 16, IQ4_NL the nibble's level in the non-linear table (a
// byte shuffle), Q4_1/Q5_1 the unsigned 4/5-bit value, all as int8 whose lane sums int_dots::q8_lanes forms
// from |w| and x signed by w (maddubs + madd on AVX2, VNNI dpbusd on AVX-512); Q4_0 its unsigned nibbles n,
// whose lane sums are n * x less 8 * x (int_dots::offset_lanes, the second once per token and block). For
// Q4_1/Q5_1 each pair also adds m_w * s_x per block into a float scalar added after the final hsum8 —
// ggml's x86 arithmetic for these types.
#include "kernels/pair-scales.h"
#include "kernels/simd/int8-weights.h"
#include "kernels/simd/isa.h"
#include "kernels/tiling.h"
#if defined(TM_KERNELS_AVX2)
#include "kernels/simd/avx2-nibble-x16.h"
#endif
#include "quant/q4-0.h"
#include "quant/q4-1.h"
#include "quant/q5-0.h"
#include "quant/q5-1.h"
#include "quant/q8-0.h"
#include "quant/q8-1.h"

#include <cstring>

namespace tmill::kernels::TM_KERNELS_LEVEL {

namespace {

// How a block's exact int32 lane sums are formed from its decoded weights (once per row and block) and the
// token's activations (once per token and block).
// Signed weights: |w| against x signed by w.
struct signed_lanes {
    struct row { __m256i wq, wabs; };
    struct token { __m256i xq; };
    static row of_row(__m256i wq) { return {wq, _mm256_sign_epi8(wq, wq)}; }
    static token of_token(__m256i xq) { return {xq}; }
    static __m256i lanes(const row & r, const token & t) { return int_dots::q8_lanes(r.wabs, r.wq, t.xq); }
};
// Unsigned nibbles n of w = n - 8 (Q4_0): n * x less 8 * x.
struct nibble_lanes {
    struct row { __m256i wn; };
    struct token { __m256i xq, x8; };
    static row of_row(__m256i wn) { return {wn}; }
    static token of_token(__m256i xq) { return {xq, int_dots::offset_x<8>(xq)}; }
    static __m256i lanes(const row & r, const token & t) { return int_dots::offset_lanes(r.wn, t.xq, t.x8); }
};

// Each format: its weight and activation block types, whether it has a minimum (then the activation is
// Q8_1, whose s = d * sum(q) applies it), its 32 weights as bytes and how their lane sums are formed.
// Q8_0, Q5_0 and IQ4_NL: signed int8 weights (int8_weights decodes them) against Q8_0.
template <typename Block>
struct int8_format {
    using block = Block;
    using act = quant::block_q8_0;
    using dots = signed_lanes;
    static constexpr bool has_min = false;
    static __m256i weights(const block & b) { return int8_weights<block>::values(b); }
};
struct q4_0_format {
    using block = quant::block_q4_0;
    using act = quant::block_q8_0;
    using dots = nibble_lanes;
    static constexpr bool has_min = false;
    static __m256i weights(const block & b) { return nibbles32(b.qs); }
};
struct q4_1_format {
    using block = quant::block_q4_1;
    using act = quant::block_q8_1;
    using dots = signed_lanes;
    static constexpr bool has_min = true;
    static __m256i weights(const block & b) { return int8_weights<block>::values(b); }
};
struct q5_1_format {
    using block = quant::block_q5_1;
    using act = quant::block_q8_1;
    using dots = signed_lanes;
    static constexpr bool has_min = true;
    static __m256i weights(const block & b) { return int8_weights<block>::values(b); }
};

// Several rows and tokens: the next tile's rows prefetched (NOTE(next-tile-prefetch)).
template <typename F, int R, int T>
void tile_q32(const char * w, size_t wb, const char * x, size_t xb, int64_t n_in, float * y, int64_t ldy) {
    using W = typename F::block;
    using A = typename F::act;
    using D = typename F::dots;
    const int64_t nb = n_in / 32;
    __m256 acc[R][T];
    float offset[R][T];   // sum over blocks of m_w * s_x (Q4_1/Q5_1)
    for (int r = 0; r < R; ++r)
        for (int t = 0; t < T; ++t) { acc[r][t] = _mm256_setzero_ps(); offset[r][t] = 0.0f; }
    for (int64_t b = 0; b < nb; ++b) {
        typename D::token xt[T];
        float sx[T];
        for (int t = 0; t < T; ++t) {
            const A * xblk = reinterpret_cast<const A *>(x + size_t(t) * xb) + b;
            xt[t] = D::of_token(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(xblk->qs)));
            if constexpr (F::has_min) sx[t] = _cvtsh_ss(xblk->s);
        }
        const __m128 dx = token_scales<A, T>(x, xb, b);
        if constexpr (R > 1 && T > 1) prefetch_next_tile<R, W>(w, wb, b);
        for (int r = 0; r < R; ++r) {
            const W * wblk = reinterpret_cast<const W *>(w + size_t(r) * wb) + b;
            const typename D::row wr = D::of_row(F::weights(*wblk));
            const __m256 scales = row_scales<T>(wblk->d, dx);
            for (int t = 0; t < T; ++t) {
                const __m256i p = D::lanes(wr, xt[t]);
                acc[r][t] = _mm256_fmadd_ps(pair_scale<T>(scales, t), _mm256_cvtepi32_ps(p), acc[r][t]);
                if constexpr (F::has_min) offset[r][t] += _cvtsh_ss(wblk->m) * sx[t];
            }
        }
    }
    for (int r = 0; r < R; ++r)
        for (int t = 0; t < T; ++t) y[t * ldy + r] = hsum8(acc[r][t]) + offset[r][t];
}

template <typename F>
struct q32_kernel {
    template <int R, int T>
    struct of {
        static void fn(const char * w, size_t wb, const char * x, size_t xb, int64_t n, float * y, int64_t ldy) {
            tile_q32<F, R, T>(w, wb, x, xb, n, y, ldy);
        }
    };
};

// One token's Q4_1 and Q5_1 tiles take sets of 8 rows (NOTE(one-token-sets)): a row's 8-lane accumulator is one FMA
// chain over its blocks, and its offset a chain of adds, so a tile of few rows waits on their latency.
// SmolLM2-135M Q4_1 decode through Engine, 2 threads, on the Xeon (Sapphire Rapids), in tiles of adjacent rows:
// 1 row 51 tok/s, 4 rows 95, 8 rows 111 (avx512 before the block step); 51, 86 and 93 on avx2. The weights of such
// a model come from cache; Q8_0's sets of 4 rows are tuned for streaming from memory.
constexpr int k_min_sets_one = 8;

} // namespace

TM_MATMUL_ROWS_ENTRY(matmul_q8_0, int8_block_rows<int_dots, quant::block_q8_0, q32_kernel<int8_format<quant::block_q8_0>>::of, isa::q8_sets_one,
                                                  isa::q8_rows_many>)
TM_MATMUL_ROWS_ENTRY(matmul_q4_0, int8_block_rows<int_dots, quant::block_q4_0, q32_kernel<q4_0_format>::of, isa::q8_sets_one,
                                                  isa::q4_rows_many>)
TM_MATMUL_ROWS_ENTRY(matmul_q4_1, int8_block_rows<int_dots, quant::block_q4_1, q32_kernel<q4_1_format>::of, k_min_sets_one,
                                                  isa::q4_rows_many>)
TM_MATMUL_ROWS_ENTRY(matmul_q5_0, int8_block_rows<int_dots, quant::block_q5_0, q32_kernel<int8_format<quant::block_q5_0>>::of, isa::q8_sets_one,
                                                  isa::q4_rows_many>)
TM_MATMUL_ROWS_ENTRY(matmul_q5_1, int8_block_rows<int_dots, quant::block_q5_1, q32_kernel<q5_1_format>::of, k_min_sets_one,
                                                  isa::q4_rows_many>)
TM_MATMUL_ROWS_ENTRY(matmul_iq4_nl, int8_block_rows<int_dots, quant::block_iq4_nl, q32_kernel<int8_format<quant::block_iq4_nl>>::of,
                                                    isa::q8_sets_one, isa::q4_rows_many>)
#if defined(TM_KERNELS_AVX2)
TM_MATMUL_ROWS_ENTRY(matmul_q4_1_x16, nibble_x16_avx2::rows<nibble_x16_avx2::q4_1_layout>)
TM_MATMUL_ROWS_ENTRY(matmul_q4_0_x16, nibble_x16_avx2::rows<nibble_x16_avx2::q4_0_layout>)
TM_MATMUL_ROWS_ENTRY(matmul_iq4_nl_x16, nibble_x16_avx2::rows<nibble_x16_avx2::iq4_nl_layout>)
TM_MATMUL_ROWS_ENTRY(matmul_q5_0_x16, nibble_x16_avx2::rows<nibble_x16_avx2::q5_0_layout>)
#endif
#if defined(TM_KERNELS_AVX512_X16)
TM_MATMUL_ROWS_ENTRY(matmul_q4_1_x16, nibble_x16_avx512::rows<nibble_x16_avx512::q4_1_layout>)
TM_MATMUL_ROWS_ENTRY(matmul_q4_0_x16, nibble_x16_avx512::rows<nibble_x16_avx512::q4_0_layout>)
TM_MATMUL_ROWS_ENTRY(matmul_iq4_nl_x16, nibble_x16_avx512::rows<nibble_x16_avx512::iq4_nl_layout>)
TM_MATMUL_ROWS_ENTRY(matmul_q5_0_x16, nibble_x16_avx512::rows<nibble_x16_avx512::q5_0_layout>)
TM_MATMUL_ROWS_ENTRY(matmul_q8_0_x16, nibble_x16_avx512::rows<nibble_x16_avx512::q8_0_layout>)
#endif

} // namespace tmill::kernels::TM_KERNELS_LEVEL
