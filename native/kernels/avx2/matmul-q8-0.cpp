// AVX2 matmul rows for Q8_0 and Q4_0 weights against Q8_0 activations.
//
// NOTE(avx2-q8): one accumulator (8 float lanes) per (row, token) pair; block b adds
// (d_w * d_x) * int32 lane sums of block b. The row x token tile only decides which pairs share
// loaded registers: each pair sees the same operations in the same block order, so a result does not
// depend on the tile, n_tok or the task split (batch invariance). Integer products: |w| (unsigned,
// <= 128) times sign-adjusted x (|x| <= 127) pair-summed by maddubs stays below 2^15.
#include "kernels/avx2/avx2.h"
#include "kernels/hsum.h"
#include "kernels/tiling.h"
#include "quant/q4-0.h"
#include "quant/q8-0.h"

#include <immintrin.h>

namespace tmill::kernels::avx2 {

namespace {

using quant::block_q4_0;
using quant::block_q8_0;

float half_to_float(uint16_t h) { return _cvtsh_ss(h); }

// Q8_0 weights: sum_j w_j * x_j per block via |w| * (x signed by w).
template <int R, int T>
void tile_q8_0(const char * w, size_t wb, const char * x, size_t xb, int64_t n_in, float * y, int64_t ldy) {
    const int64_t nb = n_in / 32;
    __m256 acc[R][T];
    for (int r = 0; r < R; ++r)
        for (int t = 0; t < T; ++t) acc[r][t] = _mm256_setzero_ps();
    const __m256i ones = _mm256_set1_epi16(1);
    for (int64_t b = 0; b < nb; ++b) {
        __m256i xq[T];
        float dx[T];
        for (int t = 0; t < T; ++t) {
            const block_q8_0 * xblk = reinterpret_cast<const block_q8_0 *>(x + size_t(t) * xb) + b;
            xq[t] = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(xblk->qs));
            dx[t] = half_to_float(xblk->d);
        }
        for (int r = 0; r < R; ++r) {
            const block_q8_0 * wblk = reinterpret_cast<const block_q8_0 *>(w + size_t(r) * wb) + b;
            const __m256i wq = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(wblk->qs));
            const __m256i wabs = _mm256_sign_epi8(wq, wq);
            const float dw = half_to_float(wblk->d);
            for (int t = 0; t < T; ++t) {
                const __m256i xs = _mm256_sign_epi8(xq[t], wq);
                const __m256i p = _mm256_madd_epi16(_mm256_maddubs_epi16(wabs, xs), ones);
                acc[r][t] = _mm256_fmadd_ps(_mm256_set1_ps(dw * dx[t]), _mm256_cvtepi32_ps(p), acc[r][t]);
            }
        }
    }
    for (int r = 0; r < R; ++r)
        for (int t = 0; t < T; ++t) y[t * ldy + r] = hsum8(acc[r][t]);
}

// Q4_0 weights: sum_j (n_j - 8) * x_j = sum_j n_j * x_j - 8 * sum_j x_j, n_j the unsigned nibble.
template <int R, int T>
void tile_q4_0(const char * w, size_t wb, const char * x, size_t xb, int64_t n_in, float * y, int64_t ldy) {
    const int64_t nb = n_in / 32;
    __m256 acc[R][T];
    for (int r = 0; r < R; ++r)
        for (int t = 0; t < T; ++t) acc[r][t] = _mm256_setzero_ps();
    const __m256i ones = _mm256_set1_epi16(1);
    const __m256i eights = _mm256_set1_epi8(8);
    const __m256i low4 = _mm256_set1_epi8(0x0f);
    for (int64_t b = 0; b < nb; ++b) {
        __m256i xq[T], x8[T];
        float dx[T];
        for (int t = 0; t < T; ++t) {
            const block_q8_0 * xblk = reinterpret_cast<const block_q8_0 *>(x + size_t(t) * xb) + b;
            xq[t] = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(xblk->qs));
            x8[t] = _mm256_maddubs_epi16(eights, xq[t]);
            dx[t] = half_to_float(xblk->d);
        }
        for (int r = 0; r < R; ++r) {
            const block_q4_0 * wblk = reinterpret_cast<const block_q4_0 *>(w + size_t(r) * wb) + b;
            const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i *>(wblk->qs));
            const __m256i both = _mm256_set_m128i(_mm_srli_epi16(packed, 4), packed);
            const __m256i wn = _mm256_and_si256(both, low4);  // elements 0..15 low lane, 16..31 high
            const float dw = half_to_float(wblk->d);
            for (int t = 0; t < T; ++t) {
                const __m256i p16 = _mm256_sub_epi16(_mm256_maddubs_epi16(wn, xq[t]), x8[t]);
                const __m256i p = _mm256_madd_epi16(p16, ones);
                acc[r][t] = _mm256_fmadd_ps(_mm256_set1_ps(dw * dx[t]), _mm256_cvtepi32_ps(p), acc[r][t]);
            }
        }
    }
    for (int r = 0; r < R; ++r)
        for (int t = 0; t < T; ++t) y[t * ldy + r] = hsum8(acc[r][t]);
}

template <int R, int T>
struct q8_0_kernel {
    static void fn(const char * w, size_t wb, const char * x, size_t xb, int64_t n_in, float * y, int64_t ldy) {
        tile_q8_0<R, T>(w, wb, x, xb, n_in, y, ldy);
    }
};

template <int R, int T>
struct q4_0_kernel {
    static void fn(const char * w, size_t wb, const char * x, size_t xb, int64_t n_in, float * y, int64_t ldy) {
        tile_q4_0<R, T>(w, wb, x, xb, n_in, y, ldy);
    }
};

} // namespace

void matmul_rows_q8_0(const void * w, size_t wb, const void * x, size_t xb, int64_t n_tok, int64_t n_in,
                      int64_t r0, int64_t r1, float * y, int64_t ldy) {
    tile_walk<q8_0_kernel, 4, 2>(w, wb, x, xb, n_tok, n_in, r0, r1, y, ldy);
}

void matmul_rows_q4_0(const void * w, size_t wb, const void * x, size_t xb, int64_t n_tok, int64_t n_in,
                      int64_t r0, int64_t r1, float * y, int64_t ldy) {
    tile_walk<q4_0_kernel, 4, 2>(w, wb, x, xb, n_tok, n_in, r0, r1, y, ldy);
}

} // namespace tmill::kernels::avx2
