// AVX2 rope: bitwise ref::rope. The row loop and the angles are the reference's (ref::rope_rows: one libm
// cos/sin per pair and row, shared by all heads); only the rotation runs in vectors, 4 pairs (normal) or 8 pairs
// (neox) at a time, the tail under a lane mask, with the same per-element operations: x0*c - x1*s and
// x0*s + x1*c, each product rounded before the sum.
#include "kernels/avx2/avx2.h"
#include "kernels/ref/ref.h"

#include <immintrin.h>

// This file is compiled with -mfma, and GCC contracts a*b - c*d into an FMA (one rounding less) even
// through _mm256_mul_ps/_mm256_sub_ps: contraction off keeps every product rounded, as the reference does.
#pragma GCC optimize("fp-contract=off")

namespace tmill::kernels::avx2 {

namespace {

// The first n lanes (n < 8): the tails run the vector code under this mask, so no scalar arithmetic is
// left for the auto-vectoriser to fuse (it forms FMADDSUB even with contraction off).
__m256i first_lanes(int64_t n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(int32_t(n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// Pairs (2i, 2i+1). cos2/sin2 hold each pair's cos/sin twice (lanes 2i and 2i+1), so one vector covers
// 4 pairs: lane 2i gets x0*c - x1*s and lane 2i+1 gets x1*c + x0*s (addsub: subtract even, add odd).
__m256 rotate_normal8(__m256 a, __m256 c, __m256 s) {
    const __m256 swapped = _mm256_permute_ps(a, 0xB1);   // (x1, x0) in each pair
    return _mm256_addsub_ps(_mm256_mul_ps(a, c), _mm256_mul_ps(swapped, s));
}

void rotate_normal(float * v, int64_t n_rot, const float * cos2, const float * sin2) {
    int64_t j = 0;
    for (; j + 8 <= n_rot; j += 8)
        _mm256_storeu_ps(v + j, rotate_normal8(_mm256_loadu_ps(v + j), _mm256_loadu_ps(cos2 + j),
                                               _mm256_loadu_ps(sin2 + j)));
    if (j < n_rot) {
        const __m256i m = first_lanes(n_rot - j);
        _mm256_maskstore_ps(v + j, m, rotate_normal8(_mm256_maskload_ps(v + j, m), _mm256_maskload_ps(cos2 + j, m),
                                                     _mm256_maskload_ps(sin2 + j, m)));
    }
}

// Pairs (i, i + half): both halves are contiguous, 8 pairs a vector.
void rotate_neox8(float * v, float * w, __m256i m, const float * cos1, const float * sin1) {
    const __m256 x0 = _mm256_maskload_ps(v, m), x1 = _mm256_maskload_ps(w, m);
    const __m256 c = _mm256_maskload_ps(cos1, m), s = _mm256_maskload_ps(sin1, m);
    _mm256_maskstore_ps(v, m, _mm256_sub_ps(_mm256_mul_ps(x0, c), _mm256_mul_ps(x1, s)));
    _mm256_maskstore_ps(w, m, _mm256_add_ps(_mm256_mul_ps(x0, s), _mm256_mul_ps(x1, c)));
}

void rotate_neox(float * v, int64_t half, const float * cos1, const float * sin1) {
    int64_t i = 0;
    for (; i + 8 <= half; i += 8) rotate_neox8(v + i, v + half + i, _mm256_set1_epi32(-1), cos1 + i, sin1 + i);
    if (i < half) rotate_neox8(v + i, v + half + i, first_lanes(half - i), cos1 + i, sin1 + i);
}

} // namespace

void rope(float * x, int64_t n_rows, int64_t n_head, int64_t head_dim, int64_t n_rot, const int32_t * pos,
          float freq_base, float freq_scale, rope_style style) {
    ref::rope_rows(x, n_rows, n_head, head_dim, n_rot, pos, freq_base, freq_scale, style, rotate_normal, rotate_neox);
}

} // namespace tmill::kernels::avx2
