// AVX-512 activation quantizer for Q8_0/Q4_0 matmuls (kernel_table::quantize_q8_0).
//
// NOTE(avx512-quantize): bitwise quant::quantize_row_q8_0, as the AVX2 variant, one block (32 floats) in
// two registers: amax of |x| (max is exact, order-free), d = amax / 127, id = 127 / amax (0 for amax == 0),
// d to F16 by F16C round-to-nearest-even, q = cvtps (MXCSR round-to-nearest-even, as nearbyint in the
// default mode) of x * id; |q| <= 127, so narrowing to bytes never clips.
#include "kernels/avx512/avx512.h"
#include "quant/q8-0.h"

#include <immintrin.h>

// GCC 12's avx512fintrin.h builds _mm512_max_ps and _mm512_extractf32x8_ps on self-initialised
// "undefined" vectors, which -Wuninitialized reports as uninitialised; those lanes are never read.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace tmill::kernels::avx512 {

void quantize_q8_0(const float * x, void * y, int64_t n) {
    // pre: n % 32 == 0 (the matmul that calls this checked n_in against the block size)
    quant::block_q8_0 * out = static_cast<quant::block_q8_0 *>(y);
    for (int64_t i = 0; i < n / quant::qk8_0; ++i) {
        const float * xb = x + i * quant::qk8_0;
        const __m512 v0 = _mm512_loadu_ps(xb), v1 = _mm512_loadu_ps(xb + 16);
        const __m512 m = _mm512_max_ps(_mm512_abs_ps(v0), _mm512_abs_ps(v1));
        const __m256 m8 = _mm256_max_ps(_mm512_castps512_ps256(m), _mm512_extractf32x8_ps(m, 1));
        __m128 h = _mm_max_ps(_mm256_castps256_ps128(m8), _mm256_extractf128_ps(m8, 1));
        h = _mm_max_ps(h, _mm_movehl_ps(h, h));
        h = _mm_max_ss(h, _mm_movehdup_ps(h));
        const float amax = _mm_cvtss_f32(h);
        const float d = amax / 127.0f;
        const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
        out[i].d = uint16_t(_cvtss_sh(d, _MM_FROUND_TO_NEAREST_INT));
        const __m512 vid = _mm512_set1_ps(id);
        const __m128i q0 = _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(_mm512_mul_ps(v0, vid)));
        const __m128i q1 = _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(_mm512_mul_ps(v1, vid)));
        _mm_storeu_si128(reinterpret_cast<__m128i *>(out[i].qs), q0);
        _mm_storeu_si128(reinterpret_cast<__m128i *>(out[i].qs + 16), q1);
    }
}

} // namespace tmill::kernels::avx512
