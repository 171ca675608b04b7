// AVX-512 rope: bitwise ref::rope. The row loop and the angles are the reference's (ref::rope_rows: one libm
// cos/sin per pair and row, shared by all heads); only the rotation runs in vectors, 8 pairs (normal) or 16 pairs
// (neox) at a time, the tail under a lane mask, with the same per-element operations: x0*c - x1*s and
// x0*s + x1*c, each product rounded before the sum.
#include "kernels/avx512/avx512.h"
#include "kernels/ref/ref.h"

#include <immintrin.h>

// This file is compiled with -mfma, and GCC contracts a*b - c*d into an FMA (one rounding less) even
// through _mm512_mul_ps/_mm512_sub_ps: contraction off keeps every product rounded, as the reference does.
#pragma GCC optimize("fp-contract=off")

namespace tmill::kernels::avx512 {

namespace {

__mmask16 first_lanes(int64_t n) { return __mmask16((1u << n) - 1u); }

// Pairs (2i, 2i+1). cos2/sin2 hold each pair's cos/sin twice (lanes 2i and 2i+1): lane 2i gets
// x0*c - x1*s and lane 2i+1 gets x1*c + x0*s.
__m512 rotate_normal16(__m512 a, __m512 c, __m512 s) {
    const __m512 ac = _mm512_mul_ps(a, c);
    const __m512 bs = _mm512_mul_ps(_mm512_shuffle_ps(a, a, 0xB1), s);   // (x1, x0) in each pair
    return _mm512_mask_sub_ps(_mm512_add_ps(ac, bs), 0x5555, ac, bs);
}

void rotate_normal(float * v, int64_t n_rot, const float * cos2, const float * sin2) {
    int64_t j = 0;
    for (; j + 16 <= n_rot; j += 16)
        _mm512_storeu_ps(v + j, rotate_normal16(_mm512_loadu_ps(v + j), _mm512_loadu_ps(cos2 + j),
                                                _mm512_loadu_ps(sin2 + j)));
    if (j < n_rot) {
        const __mmask16 m = first_lanes(n_rot - j);
        const __m512 a = _mm512_maskz_loadu_ps(m, v + j);
        _mm512_mask_storeu_ps(v + j, m, rotate_normal16(a, _mm512_maskz_loadu_ps(m, cos2 + j), _mm512_maskz_loadu_ps(m, sin2 + j)));
    }
}

// Pairs (i, i + half): both halves are contiguous, 16 pairs a vector.
void rotate_neox16(float * v, float * w, __mmask16 m, const float * cos1, const float * sin1) {
    const __m512 x0 = _mm512_maskz_loadu_ps(m, v), x1 = _mm512_maskz_loadu_ps(m, w);
    const __m512 c = _mm512_maskz_loadu_ps(m, cos1), s = _mm512_maskz_loadu_ps(m, sin1);
    _mm512_mask_storeu_ps(v, m, _mm512_sub_ps(_mm512_mul_ps(x0, c), _mm512_mul_ps(x1, s)));
    _mm512_mask_storeu_ps(w, m, _mm512_add_ps(_mm512_mul_ps(x0, s), _mm512_mul_ps(x1, c)));
}

void rotate_neox(float * v, int64_t half, const float * cos1, const float * sin1) {
    int64_t i = 0;
    for (; i + 16 <= half; i += 16) rotate_neox16(v + i, v + half + i, 0xFFFF, cos1 + i, sin1 + i);
    if (i < half) rotate_neox16(v + i, v + half + i, first_lanes(half - i), cos1 + i, sin1 + i);
}

} // namespace

void rope(float * x, int64_t n_rows, int64_t n_head, int64_t head_dim, int64_t n_rot, const int32_t * pos,
          float freq_base, float freq_scale, rope_style style) {
    ref::rope_rows(x, n_rows, n_head, head_dim, n_rot, pos, freq_base, freq_scale, style, rotate_normal, rotate_neox);
}

} // namespace tmill::kernels::avx512
