// AVX2 row operations. Reductions run in 8 lanes, then a fixed horizontal order, then the tail.
// exp is a range-reduced degree-6 polynomial (relative error ~2 ulp), clamped to [-87.3, 88.3] so 2^n
// stays a normal float; below -87.3 it returns e^-87.3 (~1e-38) rather than a denormal or zero.
#include "kernels/avx2/avx2.h"
#include "kernels/hsum.h"

#include <immintrin.h>

// libm's expf (what llama.cpp's scalar tails call); declared rather than taken from <cmath>, see below.
extern "C" float expf(float) noexcept;

namespace tmill::kernels::avx2 {

namespace {

// No <cmath> here: its inline functions would be emitted (weak, in unoptimised builds) with this
// file's ISA flags and could be picked by the linker for baseline callers.
float sqrt1(float v) { return _mm_cvtss_f32(_mm_sqrt_ss(_mm_set_ss(v))); }

float hmax8(__m256 v) {
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    s = _mm_max_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

__m256 exp8(__m256 x) {
    x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-87.3f)), _mm256_set1_ps(88.3f));
    const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                     _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);      // ln2 split: exact high part
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);          // ... and the low remainder
    __m256 p = _mm256_set1_ps(1.0f / 720.0f);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
}

float exp1(float v) { return _mm256_cvtss_f32(exp8(_mm256_set1_ps(v))); }

// e^x as llama.cpp's AVX2 vectorised expf computes it (ARM optimized-routines constants): n = round(x /
// ln2) through the 1.5·2^23 shift, b = x - n·ln2 in two parts, a degree-5 polynomial, 2^n built in the
// exponent bits as k, result k + k·poly; |n| > 126 takes the split-scale path, |n| > 192 saturates.
// silu uses it so that activations round exactly as node-llama-cpp's AVX2 build rounds them.
__m256 exp8_llama(__m256 x) {
    const __m256 shift = _mm256_set1_ps(0x1.8p23f);
    const __m256 z = _mm256_fmadd_ps(x, _mm256_set1_ps(0x1.715476p+0f), shift);
    const __m256 n = _mm256_sub_ps(z, shift);
    const __m256 b = _mm256_fnmadd_ps(n, _mm256_set1_ps(0x1.7f7d1cp-20f), _mm256_fnmadd_ps(n, _mm256_set1_ps(0x1.62e4p-1f), x));
    const __m256i e = _mm256_slli_epi32(_mm256_castps_si256(z), 23);
    const __m256 k = _mm256_castsi256_ps(_mm256_add_epi32(e, _mm256_castps_si256(_mm256_set1_ps(1.0f))));
    const __m256 abs_n = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), n);
    const __m256 needs_split = _mm256_cmp_ps(abs_n, _mm256_set1_ps(126.0f), _CMP_GT_OQ);
    const __m256 u = _mm256_mul_ps(b, b);
    const __m256 hi = _mm256_fmadd_ps(_mm256_set1_ps(0x1.0e4020p-7f), b, _mm256_set1_ps(0x1.573e2ep-5f));
    const __m256 mid = _mm256_fmadd_ps(_mm256_set1_ps(0x1.555e66p-3f), b, _mm256_set1_ps(0x1.fffdb6p-2f));
    const __m256 j = _mm256_fmadd_ps(_mm256_fmadd_ps(hi, u, mid), u, _mm256_mul_ps(_mm256_set1_ps(0x1.ffffecp-1f), b));
    if (!_mm256_movemask_ps(needs_split)) return _mm256_fmadd_ps(j, k, k);
    const __m256i g = _mm256_and_si256(_mm256_castps_si256(_mm256_cmp_ps(n, _mm256_setzero_ps(), _CMP_LE_OQ)),
                                       _mm256_set1_epi32(int32_t(0x82000000u)));
    const __m256 s1 = _mm256_castsi256_ps(_mm256_add_epi32(g, _mm256_set1_epi32(0x7f000000)));
    const __m256 s2 = _mm256_castsi256_ps(_mm256_sub_epi32(e, g));
    const __m256 saturate = _mm256_cmp_ps(abs_n, _mm256_set1_ps(192.0f), _CMP_GT_OQ);
    const __m256 split = _mm256_mul_ps(_mm256_fmadd_ps(s2, j, s2), s1);
    const __m256 in_range = _mm256_or_ps(_mm256_and_ps(needs_split, split), _mm256_andnot_ps(needs_split, _mm256_fmadd_ps(k, j, k)));
    return _mm256_or_ps(_mm256_and_ps(saturate, _mm256_mul_ps(s1, s1)), _mm256_andnot_ps(saturate, in_range));
}

} // namespace

// NOTE(rmsnorm): llama.cpp's rms_norm sums the F32 squares in double, left to right; the same sum here
// (a serial double chain: a few µs per row) keeps our normalised activations bitwise equal to its.
void rmsnorm(const float * x, const float * w, float * y, int64_t n, float eps) {
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) sum += double(x[i] * x[i]);
    const float scale = 1.0f / sqrt1(float(sum / double(n)) + eps);
    const __m256 vs = _mm256_set1_ps(scale);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_mul_ps(_mm256_loadu_ps(x + i), vs), _mm256_loadu_ps(w + i)));
    for (; i < n; ++i) y[i] = x[i] * scale * w[i];
}

void softmax(float * x, int64_t n) {
    __m256 vmax = _mm256_set1_ps(-__builtin_inff());
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) vmax = _mm256_max_ps(vmax, _mm256_loadu_ps(x + i));
    float max = hmax8(vmax);
    for (; i < n; ++i) max = x[i] > max ? x[i] : max;
    const __m256 vm = _mm256_set1_ps(max);
    __m256 acc = _mm256_setzero_ps();
    for (i = 0; i + 8 <= n; i += 8) {
        const __m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(x + i), vm));
        _mm256_storeu_ps(x + i, e);
        acc = _mm256_add_ps(acc, e);
    }
    float sum = hsum8(acc);
    for (; i < n; ++i) {
        x[i] = exp1(x[i] - max);
        sum += x[i];
    }
    const float inv = 1.0f / sum;
    const __m256 vi = _mm256_set1_ps(inv);
    for (i = 0; i + 8 <= n; i += 8) _mm256_storeu_ps(x + i, _mm256_mul_ps(_mm256_loadu_ps(x + i), vi));
    for (; i < n; ++i) x[i] *= inv;
}

// llama.cpp's swiglu: full 8-lane groups through exp8_llama, the tail through libm's expf.
void silu_mul(const float * a, const float * b, float * y, int64_t n) {
    const __m256 one = _mm256_set1_ps(1.0f);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 va = _mm256_loadu_ps(a + i);
        const __m256 e = exp8_llama(_mm256_sub_ps(_mm256_setzero_ps(), va));
        _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_div_ps(va, _mm256_add_ps(one, e)), _mm256_loadu_ps(b + i)));
    }
    for (; i < n; ++i) y[i] = a[i] / (1.0f + expf(-a[i])) * b[i];
}

void add(const float * a, const float * b, float * y, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_add_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i)));
    for (; i < n; ++i) y[i] = a[i] + b[i];
}

float dot_f32(const float * a, const float * b, int64_t n) {
    __m256 acc = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) acc = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc);
    float sum = hsum8(acc);
    for (; i < n; ++i) sum += a[i] * b[i];
    return sum;
}

void axpy_f32(float a, const float * x, float * y, int64_t n) {
    const __m256 va = _mm256_set1_ps(a);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, _mm256_fmadd_ps(va, _mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i)));
    for (; i < n; ++i) y[i] += a * x[i];
}

float dot_f32_f16(const float * a, const uint16_t * b, int64_t n) {
    __m256 acc = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 vb = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i *>(b + i)));
        acc = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), vb, acc);
    }
    float sum = hsum8(acc);
    for (; i < n; ++i) sum += a[i] * _cvtsh_ss(b[i]);
    return sum;
}

void axpy_f16(float a, const uint16_t * x, float * y, int64_t n) {
    const __m256 va = _mm256_set1_ps(a);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 vx = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i *>(x + i)));
        _mm256_storeu_ps(y + i, _mm256_fmadd_ps(va, vx, _mm256_loadu_ps(y + i)));
    }
    for (; i < n; ++i) y[i] += a * _cvtsh_ss(x[i]);
}

} // namespace tmill::kernels::avx2
