// Horizontal sums of 8 lanes for the SIMD kernel files (AVX2 and AVX-512 translation units only). As in
// tiling.h the function is in an anonymous namespace: each ISA translation unit gets its own internal copy
// compiled with its own flags, so none can leak across ISAs through the linker.
#pragma once

#include <cstdint>

#include <immintrin.h>

namespace tmill::kernels {
namespace {

// ((v0+v4) + (v2+v6)) + ((v1+v5) + (v3+v7)): halves, then pairs of lanes.
inline float hsum8(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

// The exact int32 sums of 8 lane vectors (lane l of the result: the sum of v[l]'s 8 lanes).
inline __m256i sums8(const __m256i * v) {
    const __m256i a = _mm256_hadd_epi32(_mm256_hadd_epi32(v[0], v[1]), _mm256_hadd_epi32(v[2], v[3]));
    const __m256i b = _mm256_hadd_epi32(_mm256_hadd_epi32(v[4], v[5]), _mm256_hadd_epi32(v[6], v[7]));
    return _mm256_add_epi32(_mm256_permute2x128_si256(a, b, 0x20), _mm256_permute2x128_si256(a, b, 0x31));
}

// The 8-lane float accumulators of an R x T matmul tile, one per (row, token), starting at zero; store
// reduces each with hsum8 into y[t * ldy + r].
template <int R, int T>
struct tile_acc {
    __m256 v[R][T];
    tile_acc() {
        for (int r = 0; r < R; ++r)
            for (int t = 0; t < T; ++t) v[r][t] = _mm256_setzero_ps();
    }
    void store(float * y, int64_t ldy) const {
        for (int r = 0; r < R; ++r)
            for (int t = 0; t < T; ++t) y[t * ldy + r] = hsum8(v[r][t]);
    }
};

} // namespace
} // namespace tmill::kernels
