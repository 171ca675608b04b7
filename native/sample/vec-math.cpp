#include "sample/vec-math.h"

#include <limits>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace tmill {

// NOTE(vec-math): the same algorithm as exp_approx, four lanes at a time, written with SSE2
// intrinsics because GCC will not if-convert the clamps under the default -ftrapping-math, so the
// plain loop stays scalar. Sums are kept in float per 256-term block and added up in double.
double sum_exp(const float * row, int32_t n, float mx, float * out) {
    double total = 0.0;
    int32_t i = 0;
#if defined(__SSE2__)
    const __m128 v_mx = _mm_set1_ps(mx);
    const __m128 v_log2e = _mm_set1_ps(1.44269504088896341f);
    const __m128 v_lo = _mm_set1_ps(-126.0f);
    const __m128 v_magic = _mm_set1_ps(12582912.0f);
    const __m128 v_ln2_hi = _mm_set1_ps(0.693145751953125f);
    const __m128 v_ln2_lo = _mm_set1_ps(1.428606765330187e-06f);
    const __m128 c7 = _mm_set1_ps(1.0f / 5040.0f), c6 = _mm_set1_ps(1.0f / 720.0f), c5 = _mm_set1_ps(1.0f / 120.0f);
    const __m128 c4 = _mm_set1_ps(1.0f / 24.0f), c3 = _mm_set1_ps(1.0f / 6.0f), c2 = _mm_set1_ps(0.5f);
    const __m128 one = _mm_set1_ps(1.0f);
    const __m128i bias = _mm_set1_epi32(127);
    while (i + 4 <= n) {
        __m128 acc = _mm_setzero_ps();
        const int32_t end = (n - i) >= 256 ? i + 256 : i + ((n - i) & ~3);
        for (; i < end; i += 4) {
            const __m128 x = _mm_sub_ps(_mm_loadu_ps(row + i), v_mx);
            const __m128 t = _mm_mul_ps(x, v_log2e);
            const __m128 keep = _mm_cmpge_ps(t, v_lo);  // false for -inf and NaN
            const __m128 tc = _mm_max_ps(t, v_lo);
            const __m128 fi = _mm_sub_ps(_mm_add_ps(tc, v_magic), v_magic);
            const __m128 f = _mm_sub_ps(_mm_sub_ps(x, _mm_mul_ps(fi, v_ln2_hi)), _mm_mul_ps(fi, v_ln2_lo));
            __m128 p = c7;
            p = _mm_add_ps(_mm_mul_ps(p, f), c6);
            p = _mm_add_ps(_mm_mul_ps(p, f), c5);
            p = _mm_add_ps(_mm_mul_ps(p, f), c4);
            p = _mm_add_ps(_mm_mul_ps(p, f), c3);
            p = _mm_add_ps(_mm_mul_ps(p, f), c2);
            p = _mm_add_ps(_mm_mul_ps(p, f), one);
            p = _mm_add_ps(_mm_mul_ps(p, f), one);
            const __m128i bits = _mm_slli_epi32(_mm_add_epi32(_mm_cvttps_epi32(fi), bias), 23);
            const __m128 r = _mm_and_ps(_mm_mul_ps(p, _mm_castsi128_ps(bits)), keep);
            if (out) _mm_storeu_ps(out + i, r);
            acc = _mm_add_ps(acc, r);
        }
        float lanes[4];
        _mm_storeu_ps(lanes, acc);
        total += (double)((lanes[0] + lanes[2]) + (lanes[1] + lanes[3]));
    }
#endif
    for (; i < n; ++i) {
        const float e = exp_approx(row[i] - mx);
        if (out) out[i] = e;
        total += e;
    }
    return total;
}

float row_max(const float * row, int32_t n) {
    float mx = -std::numeric_limits<float>::infinity();
    int32_t i = 0;
#if defined(__SSE2__)
    __m128 m0 = _mm_set1_ps(mx), m1 = m0;
    for (; i + 8 <= n; i += 8) {
        m0 = _mm_max_ps(m0, _mm_loadu_ps(row + i));
        m1 = _mm_max_ps(m1, _mm_loadu_ps(row + i + 4));
    }
    float lanes[4];
    _mm_storeu_ps(lanes, _mm_max_ps(m0, m1));
    for (float l : lanes) mx = l > mx ? l : mx;
#endif
    for (; i < n; ++i) mx = row[i] > mx ? row[i] : mx;
    return mx;
}

int32_t row_argmax(const float * row, int32_t n) {
    const float mx = row_max(row, n);
    for (int32_t i = 0; i < n; ++i)
        if (row[i] == mx) return i;
    return 0;  // all NaN: nothing compares equal
}

void mask_below(float * row, int32_t n, float threshold) {
    const float ninf = -std::numeric_limits<float>::infinity();
    int32_t i = 0;
#if defined(__SSE2__)
    const __m128 thr = _mm_set1_ps(threshold), vninf = _mm_set1_ps(ninf);
    for (; i + 4 <= n; i += 4) {
        const __m128 v = _mm_loadu_ps(row + i);
        const __m128 below = _mm_cmplt_ps(v, thr);
        _mm_storeu_ps(row + i, _mm_or_ps(_mm_and_ps(below, vninf), _mm_andnot_ps(below, v)));
    }
#endif
    for (; i < n; ++i)
        if (row[i] < threshold) row[i] = ninf;
}

int32_t count_at_least(const float * row, int32_t n, float v) {
    int32_t count = 0, i = 0;
#if defined(__SSE2__)
    const __m128 vv = _mm_set1_ps(v);
    __m128i acc = _mm_setzero_si128();
    for (; i + 4 <= n; i += 4)  // each true lane is -1: subtracting counts it
        acc = _mm_sub_epi32(acc, _mm_castps_si128(_mm_cmpge_ps(_mm_loadu_ps(row + i), vv)));
    int32_t lanes[4];
    _mm_storeu_si128(reinterpret_cast<__m128i *>(lanes), acc);
    count = lanes[0] + lanes[1] + lanes[2] + lanes[3];
#endif
    for (; i < n; ++i) count += row[i] >= v;
    return count;
}

} // namespace tmill
