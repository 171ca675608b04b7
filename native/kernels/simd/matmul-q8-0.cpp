// Matmul rows for Q8_0 and Q4_0 weights against Q8_0 activations, once per ISA: on AVX2 the tiles below, on
// AVX-512 the block-step kernels (avx512-block-step.h, NOTE(block-step-avx512)) through int8_block_rows.
//
// NOTE(q8-matmul): llama.cpp's order, the AVX2 level's (and the baseline's, block by block): one 8-lane float accumulator per (row, token) pair; block b adds (d_w * d_x) times the
// block's int32 lane sums (acc = fma(d_w * d_x, lanes, acc)), reduced by hsum8 at the end. The lane sums are
// exact integers, so how an ISA forms them is free (int_dots::q8_lanes); every pair sees the same float
// operations in the same block order in every tile shape, so a result does not depend on the tile, n_tok or
// the task split (batch invariance).
#include "kernels/pair-scales.h"
#include "kernels/simd/isa.h"
#include "kernels/tiling.h"
#include "quant/q4-0.h"
#include "quant/q8-0.h"

namespace tmill::kernels::TM_KERNELS_LEVEL {

namespace {

using quant::block_q4_0;
using quant::block_q8_0;

__m256i load256(const void * p) { return _mm256_loadu_si256(static_cast<const __m256i *>(p)); }

// Q8_0 weights: the lanes from |w| and x signed by w.
template <int R, int T>
void tile_q8_0(const char * w, size_t wb, const char * x, size_t xb, int64_t n_in, float * y, int64_t ldy) {
    const int64_t nb = n_in / quant::qk8_0;
    tile_acc<R, T> tile;
    auto & acc = tile.v;
    for (int64_t b = 0; b < nb; ++b) {
        __m256i xq[T];
        for (int t = 0; t < T; ++t) xq[t] = load256((reinterpret_cast<const block_q8_0 *>(x + size_t(t) * xb) + b)->qs);
        const __m128 dx = token_scales<block_q8_0, T>(x, xb, b);
        for (int r = 0; r < R; ++r) {
            const block_q8_0 * wblk = reinterpret_cast<const block_q8_0 *>(w + size_t(r) * wb) + b;
            const __m256i wq = load256(wblk->qs);
            const __m256i wabs = _mm256_sign_epi8(wq, wq);
            const __m256 scales = row_scales(wblk->d, dx);
            for (int t = 0; t < T; ++t) {
                const __m256i p = int_dots::q8_lanes(wabs, wq, xq[t]);
                acc[r][t] = _mm256_fmadd_ps(pair_scale(scales, t), _mm256_cvtepi32_ps(p), acc[r][t]);
            }
        }
    }
    tile.store(y, ldy);
}

// Q4_0 weights: sum_j (n_j - 8) * x_j = sum_j n_j * x_j - 8 * sum_j x_j, n_j the unsigned nibble.
template <int R, int T>
void tile_q4_0(const char * w, size_t wb, const char * x, size_t xb, int64_t n_in, float * y, int64_t ldy) {
    const int64_t nb = n_in / quant::qk4_0;
    tile_acc<R, T> tile;
    auto & acc = tile.v;
    const __m256i low4 = _mm256_set1_epi8(0x0f);
    for (int64_t b = 0; b < nb; ++b) {
        __m256i xq[T], x8[T];
        for (int t = 0; t < T; ++t) {
            xq[t] = load256((reinterpret_cast<const block_q8_0 *>(x + size_t(t) * xb) + b)->qs);
            x8[t] = int_dots::q4_x8(xq[t]);
        }
        const __m128 dx = token_scales<block_q8_0, T>(x, xb, b);
        for (int r = 0; r < R; ++r) {
            const block_q4_0 * wblk = reinterpret_cast<const block_q4_0 *>(w + size_t(r) * wb) + b;
            const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i *>(wblk->qs));
            const __m256i wn = _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(packed, 4), packed), low4);  // 0..15 low lane, 16..31 high
            const __m256 scales = row_scales(wblk->d, dx);
            for (int t = 0; t < T; ++t) {
                const __m256i p = int_dots::q4_lanes(wn, xq[t], x8[t]);
                acc[r][t] = _mm256_fmadd_ps(pair_scale(scales, t), _mm256_cvtepi32_ps(p), acc[r][t]);
            }
        }
    }
    tile.store(y, ldy);
}

template <int R, int T>
struct q8_0_kernel {
    static void fn(const char * w, size_t wb, const char * x, size_t xb, int64_t n, float * y, int64_t ldy) {
        tile_q8_0<R, T>(w, wb, x, xb, n, y, ldy);
    }
};
template <int R, int T>
struct q4_0_kernel {
    static void fn(const char * w, size_t wb, const char * x, size_t xb, int64_t n, float * y, int64_t ldy) {
        tile_q4_0<R, T>(w, wb, x, xb, n, y, ldy);
    }
};

} // namespace

TM_MATMUL_ROWS_ENTRY(matmul_q8_0, int8_block_rows<int_dots, block_q8_0, q8_0_kernel, isa::q8_rows_one, isa::q8_rows_many>)
TM_MATMUL_ROWS_ENTRY(matmul_q4_0, int8_block_rows<int_dots, block_q4_0, q4_0_kernel, isa::q8_rows_one, isa::q4_rows_many>)

} // namespace tmill::kernels::TM_KERNELS_LEVEL
