// AVX-512 VNNI matmul rows for Q8_0 and Q4_0 weights against Q8_0 activations.
//
// NOTE(avx512-q8): two 32-blocks per 512-bit register (lanes 0-7: block b, lanes 8-15: block b+1), one
// 16-lane float accumulator per (row, token) pair; a pair of blocks adds (d_w * d_x per half) times the
// dpbusd int32 lane sums. An odd last block runs with a zeroed upper half (adds exact zeros). The
// row x token tile only shares loaded registers: each pair sees the same operations in the same
// order in every tile shape (batch invariance). dpbusd takes unsigned x signed bytes: Q8_0 uses
// |w| and x negated where w < 0 (|x| <= 127 so negation is exact); Q4_0 uses the unsigned nibble n
// and subtracts 8 * sum(x), both exact in int32.
#include "kernels/avx512/avx512.h"
#include "kernels/tiling.h"
#include "quant/q4-0.h"
#include "quant/q8-0.h"

#include <immintrin.h>

// GCC 12's avx512fintrin.h builds _mm512_reduce_*/_mm512_insert* on self-initialised "undefined"
// vectors, which -Wuninitialized reports as uninitialised; the lanes are never read.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace tmill::kernels::avx512 {

namespace {

using quant::block_q4_0;
using quant::block_q8_0;

// Two 32-byte quant arrays into one register; `second` null -> upper half zero.
__m512i load_pair(const int8_t * first, const int8_t * second) {
    const __m256i lo = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(first));
    const __m256i hi = second ? _mm256_loadu_si256(reinterpret_cast<const __m256i *>(second)) : _mm256_setzero_si256();
    return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
}

__m512 scale_pair(uint16_t first, const uint16_t * second) {
    const __m256 hi = second ? _mm256_set1_ps(_cvtsh_ss(*second)) : _mm256_setzero_ps();
    return _mm512_insertf32x8(_mm512_set1_ps(_cvtsh_ss(first)), hi, 1);
}

template <int R, int T>
void tile_q8_0(const char * w, size_t wb, const char * x, size_t xb, int64_t n_in, float * y, int64_t ldy) {
    const int64_t nb = n_in / quant::qk8_0;
    __m512 acc[R][T];
    for (int r = 0; r < R; ++r)
        for (int t = 0; t < T; ++t) acc[r][t] = _mm512_setzero_ps();
    const __m512i zero = _mm512_setzero_si512();
    for (int64_t b = 0; b < nb; b += 2) {
        const bool pair = b + 1 < nb;
        __m512i xq[T];
        __m512 dx[T];
        for (int t = 0; t < T; ++t) {
            const block_q8_0 * xblk = reinterpret_cast<const block_q8_0 *>(x + size_t(t) * xb) + b;
            xq[t] = load_pair(xblk[0].qs, pair ? xblk[1].qs : nullptr);
            dx[t] = scale_pair(xblk[0].d, pair ? &xblk[1].d : nullptr);
        }
        for (int r = 0; r < R; ++r) {
            const block_q8_0 * wblk = reinterpret_cast<const block_q8_0 *>(w + size_t(r) * wb) + b;
            const __m512i wq = load_pair(wblk[0].qs, pair ? wblk[1].qs : nullptr);
            const __m512i wabs = _mm512_abs_epi8(wq);
            const __mmask64 neg = _mm512_movepi8_mask(wq);
            const __m512 dw = scale_pair(wblk[0].d, pair ? &wblk[1].d : nullptr);
            for (int t = 0; t < T; ++t) {
                const __m512i xs = _mm512_mask_sub_epi8(xq[t], neg, zero, xq[t]);
                const __m512i p = _mm512_dpbusd_epi32(zero, wabs, xs);
                acc[r][t] = _mm512_fmadd_ps(_mm512_mul_ps(dw, dx[t]), _mm512_cvtepi32_ps(p), acc[r][t]);
            }
        }
    }
    for (int r = 0; r < R; ++r)
        for (int t = 0; t < T; ++t) y[t * ldy + r] = _mm512_reduce_add_ps(acc[r][t]);
}

// 16 packed bytes of each of two Q4_0 blocks -> 64 unsigned nibbles in element order.
__m512i unpack_q4_pair(const uint8_t * first, const uint8_t * second, __m512i shifts, __m512i low4) {
    const __m128i q0 = _mm_loadu_si128(reinterpret_cast<const __m128i *>(first));
    const __m128i q1 = second ? _mm_loadu_si128(reinterpret_cast<const __m128i *>(second)) : _mm_setzero_si128();
    __m512i z = _mm512_castsi128_si512(q0);
    z = _mm512_inserti32x4(z, q0, 1);
    z = _mm512_inserti32x4(z, q1, 2);
    z = _mm512_inserti32x4(z, q1, 3);
    return _mm512_and_si512(_mm512_srlv_epi16(z, shifts), low4);
}

template <int R, int T>
void tile_q4_0(const char * w, size_t wb, const char * x, size_t xb, int64_t n_in, float * y, int64_t ldy) {
    const int64_t nb = n_in / quant::qk4_0;
    __m512 acc[R][T];
    for (int r = 0; r < R; ++r)
        for (int t = 0; t < T; ++t) acc[r][t] = _mm512_setzero_ps();
    const __m512i zero = _mm512_setzero_si512();
    const __m512i eights = _mm512_set1_epi8(8);
    const __m512i low4 = _mm512_set1_epi8(0x0f);
    // 128-bit lanes 0 and 2 keep the low nibbles, lanes 1 and 3 shift the high nibbles down.
    const __m512i shifts = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_set_m128i(_mm_set1_epi16(4), _mm_setzero_si128())),
                                              _mm256_set_m128i(_mm_set1_epi16(4), _mm_setzero_si128()), 1);
    for (int64_t b = 0; b < nb; b += 2) {
        const bool pair = b + 1 < nb;
        __m512i xq[T], x8[T];
        __m512 dx[T];
        for (int t = 0; t < T; ++t) {
            const block_q8_0 * xblk = reinterpret_cast<const block_q8_0 *>(x + size_t(t) * xb) + b;
            xq[t] = load_pair(xblk[0].qs, pair ? xblk[1].qs : nullptr);
            x8[t] = _mm512_dpbusd_epi32(zero, eights, xq[t]);
            dx[t] = scale_pair(xblk[0].d, pair ? &xblk[1].d : nullptr);
        }
        for (int r = 0; r < R; ++r) {
            const block_q4_0 * wblk = reinterpret_cast<const block_q4_0 *>(w + size_t(r) * wb) + b;
            const __m512i wn = unpack_q4_pair(wblk[0].qs, pair ? wblk[1].qs : nullptr, shifts, low4);
            const __m512 dw = scale_pair(wblk[0].d, pair ? &wblk[1].d : nullptr);
            for (int t = 0; t < T; ++t) {
                const __m512i p = _mm512_sub_epi32(_mm512_dpbusd_epi32(zero, wn, xq[t]), x8[t]);
                acc[r][t] = _mm512_fmadd_ps(_mm512_mul_ps(dw, dx[t]), _mm512_cvtepi32_ps(p), acc[r][t]);
            }
        }
    }
    for (int r = 0; r < R; ++r)
        for (int t = 0; t < T; ++t) y[t * ldy + r] = _mm512_reduce_add_ps(acc[r][t]);
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

void matmul_rows_q8_0(const void * w, size_t wb, const void * x, size_t xb, int64_t n_tok, int64_t n_in,
                      int64_t r0, int64_t r1, float * y, int64_t ldy) {
    tile_walk<q8_0_kernel, 4, 4>(w, wb, x, xb, n_tok, n_in, r0, r1, y, ldy);
}

void matmul_rows_q4_0(const void * w, size_t wb, const void * x, size_t xb, int64_t n_tok, int64_t n_in,
                      int64_t r0, int64_t r1, float * y, int64_t ldy) {
    tile_walk<q4_0_kernel, 4, 4>(w, wb, x, xb, n_tok, n_in, r0, r1, y, ldy);
}

} // namespace tmill::kernels::avx512
