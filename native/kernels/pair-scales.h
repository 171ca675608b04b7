// The per-block scale products d_w * d_x of a matmul tile's (row, token) pairs, for the SIMD kernel files
// (AVX2 and AVX-512 translation units only; anonymous namespace as in tiling.h and hsum.h, so each ISA gets
// its own internal copy).
//
// One vector multiply forms a row's products against all of the tile's (at most 4) tokens: the same F32
// products as one scalar multiply per pair, so no result changes. Each pair then takes its product with one
// in-lane shuffle, where a scalar multiply and a broadcast per pair made the 2 x 4 AVX2 tile's scale
// handling about a tenth of a prompt's time.
#pragma once

#include <cstddef>
#include <cstdint>

#include <immintrin.h>

namespace tmill::kernels {
namespace {

// Lanes 0 .. T - 1: the F32 scales d of block b of T activation rows (x at the first, rows xb bytes apart).
template <typename Act, int T>
inline __m128 token_scales(const char * x, size_t xb, int64_t b) {
    static_assert(T >= 1 && T <= 4, "a tile has at most 4 tokens");
    __m128i h = _mm_setzero_si128();
    for (int t = 0; t < T; ++t) h = _mm_insert_epi16(h, (reinterpret_cast<const Act *>(x + size_t(t) * xb) + b)->d, t);
    return _mm_cvtph_ps(h);
}

// A weight row's block scale (F16) times each token's: lane t of both 128-bit halves holds pair t's product. A tile of
// one token takes its one product with a scalar multiply and a broadcast, already in all 8 lanes, which saves the
// one-token tile (decode) a vector multiply, an insert and a shuffle per row and block.
template <int T>
inline __m256 row_scales(uint16_t dw, __m128 dx) {
    if constexpr (T == 1) return _mm256_set1_ps(_cvtsh_ss(dw) * _mm_cvtss_f32(dx));
    const __m128 s = _mm_mul_ps(_mm_set1_ps(_cvtsh_ss(dw)), dx);
    return _mm256_set_m128(s, s);
}

// Pair t's product in all 8 lanes (t a constant once the tile's token loop is unrolled: one vshufps, which
// leaves the registers a variable permute's index vectors would take).
template <int T>
inline __m256 pair_scale(__m256 row, int t) {
    if constexpr (T == 1) return row;
    switch (t) {
        case 0: return _mm256_shuffle_ps(row, row, 0x00);
        case 1: return _mm256_shuffle_ps(row, row, 0x55);
        case 2: return _mm256_shuffle_ps(row, row, 0xaa);
        default: return _mm256_shuffle_ps(row, row, 0xff);
    }
}

} // namespace
} // namespace tmill::kernels
