// AVX2 activation quantizer for Q8_0/Q4_0 matmuls (kernel_table::quantize_q8_0).
//
// NOTE(avx2-quantize): bitwise quant::quantize_row_q8_0, which runs once per activation row of every
// prompt matmul (its scalar nearbyint is a library call per element at the baseline ISA). The same
// IEEE operations in the same order per element: amax of |x| (max is exact, order-free), d = amax / 127,
// id = 127 / amax (0 for amax == 0), d to F16 by F16C round-to-nearest-even (the library's conversion
// rounds the same way, subnormals included), q = cvtps (MXCSR round-to-nearest-even, as nearbyint in
// the default mode) of x * id, |q| <= 127 so the saturating packs never clip.
#include "kernels/avx2/avx2.h"
#include "quant/q8-0.h"

#include <immintrin.h>

namespace tmill::kernels::avx2 {

void quantize_q8_0(const float * x, void * y, int64_t n) {
    // pre: n % 32 == 0 (the matmul that calls this checked n_in against the block size)
    quant::block_q8_0 * out = static_cast<quant::block_q8_0 *>(y);
    const __m256 sign = _mm256_set1_ps(-0.0f);
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);   // undoes the packs' lane interleave
    for (int64_t i = 0; i < n / quant::qk8_0; ++i) {
        const float * xb = x + i * quant::qk8_0;
        const __m256 v0 = _mm256_loadu_ps(xb), v1 = _mm256_loadu_ps(xb + 8);
        const __m256 v2 = _mm256_loadu_ps(xb + 16), v3 = _mm256_loadu_ps(xb + 24);
        const __m256 m = _mm256_max_ps(_mm256_max_ps(_mm256_andnot_ps(sign, v0), _mm256_andnot_ps(sign, v1)),
                                       _mm256_max_ps(_mm256_andnot_ps(sign, v2), _mm256_andnot_ps(sign, v3)));
        __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
        h = _mm_max_ps(h, _mm_movehl_ps(h, h));
        h = _mm_max_ss(h, _mm_movehdup_ps(h));
        const float amax = _mm_cvtss_f32(h);
        const float d = amax / 127.0f;
        const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
        out[i].d = uint16_t(_cvtss_sh(d, _MM_FROUND_TO_NEAREST_INT));
        const __m256 vid = _mm256_set1_ps(id);
        const __m256i q0 = _mm256_cvtps_epi32(_mm256_mul_ps(v0, vid)), q1 = _mm256_cvtps_epi32(_mm256_mul_ps(v1, vid));
        const __m256i q2 = _mm256_cvtps_epi32(_mm256_mul_ps(v2, vid)), q3 = _mm256_cvtps_epi32(_mm256_mul_ps(v3, vid));
        const __m256i q = _mm256_packs_epi16(_mm256_packs_epi32(q0, q1), _mm256_packs_epi32(q2, q3));
        _mm256_storeu_si256(reinterpret_cast<__m256i *>(out[i].qs), _mm256_permutevar8x32_epi32(q, order));
    }
}

} // namespace tmill::kernels::avx2
