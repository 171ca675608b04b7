// AVX-512 row operations; tails through masks. exp: range reduction to r in [-ln2/2, ln2/2], a
// degree-6 polynomial (~2 ulp) and scalef for 2^n, which gives 0 for large negative inputs (so masked
// -inf attention scores become exact zeros) and inf on overflow.
#include "kernels/avx512/avx512.h"

#include <immintrin.h>

// libm's expf (what llama.cpp's scalar tails call); declared rather than taken from <cmath>, see below.
extern "C" float expf(float) noexcept;

// GCC 12's avx512fintrin.h builds _mm512_reduce_*/_mm512_insert* on self-initialised "undefined"
// vectors, which -Wuninitialized reports as uninitialised; the lanes are never read.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace tmill::kernels::avx512 {

namespace {

// No <cmath> here: its inline functions would be emitted (weak, in unoptimised builds) with this
// file's ISA flags and could be picked by the linker for baseline callers.
float sqrt1(float v) { return _mm_cvtss_f32(_mm_sqrt_ss(_mm_set_ss(v))); }

__mmask16 tail_mask(int64_t left) { return left >= 16 ? __mmask16(0xffff) : __mmask16((1u << left) - 1); }

__m512 exp16(__m512 x) {
    x = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(-104.0f)), _mm512_set1_ps(88.8f));
    const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
    __m512 p = _mm512_set1_ps(1.0f / 720.0f);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    return _mm512_scalef_ps(p, n);
}

// e^x with the range reduction and degree-5 polynomial of llama.cpp's vectorised expf (ARM
// optimized-routines constants): n = round(x / ln2) through the 1.5·2^23 shift, b = x - n·ln2 in two
// parts, 2^n applied with scalef; |n| > 192 saturates to 0 or inf. silu uses it so that activations
// round exactly as node-llama-cpp's AVX-512 build rounds them.
__m512 exp16_llama(__m512 x) {
    const __m512 shift = _mm512_set1_ps(0x1.8p23f);
    const __m512 z = _mm512_fmadd_ps(x, _mm512_set1_ps(0x1.715476p+0f), shift);
    const __m512 n = _mm512_sub_ps(z, shift);
    const __m512 b = _mm512_fnmadd_ps(n, _mm512_set1_ps(0x1.7f7d1cp-20f), _mm512_fnmadd_ps(n, _mm512_set1_ps(0x1.62e4p-1f), x));
    const __m512 u = _mm512_mul_ps(b, b);
    const __m512 hi = _mm512_fmadd_ps(_mm512_set1_ps(0x1.0e4020p-7f), b, _mm512_set1_ps(0x1.573e2ep-5f));
    const __m512 mid = _mm512_fmadd_ps(_mm512_set1_ps(0x1.555e66p-3f), b, _mm512_set1_ps(0x1.fffdb6p-2f));
    const __m512 lo = _mm512_fmadd_ps(_mm512_set1_ps(0x1.ffffecp-1f), b, _mm512_set1_ps(1.0f));
    const __m512 poly = _mm512_fmadd_ps(_mm512_fmadd_ps(hi, u, mid), u, lo);
    const __m512 scaled = _mm512_scalef_ps(poly, n);
    const __mmask16 out_of_range = _mm512_cmp_ps_mask(_mm512_abs_ps(n), _mm512_set1_ps(192.0f), _CMP_GT_OQ);
    if (out_of_range == 0) return scaled;
    const __mmask16 negative = _mm512_cmp_ps_mask(n, _mm512_setzero_ps(), _CMP_LE_OQ);
    const __m512 saturated = _mm512_mask_blend_ps(negative, _mm512_set1_ps(__builtin_inff()), _mm512_setzero_ps());
    return _mm512_mask_blend_ps(out_of_range, scaled, saturated);
}

} // namespace

// NOTE(rmsnorm): llama.cpp's rms_norm sums the F32 squares in double, left to right; the same sum here
// (a serial double chain: a few µs per row) keeps our normalised activations bitwise equal to its.
void rmsnorm(const float * x, const float * w, float * y, int64_t n, float eps) {
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) sum += double(x[i] * x[i]);
    const float scale = 1.0f / sqrt1(float(sum / double(n)) + eps);
    const __m512 vs = _mm512_set1_ps(scale);
    for (int64_t i = 0; i < n; i += 16) {
        const __mmask16 m = tail_mask(n - i);
        const __m512 v = _mm512_mul_ps(_mm512_mul_ps(_mm512_maskz_loadu_ps(m, x + i), vs), _mm512_maskz_loadu_ps(m, w + i));
        _mm512_mask_storeu_ps(y + i, m, v);
    }
}

void softmax(float * x, int64_t n) {
    __m512 vmax = _mm512_set1_ps(-__builtin_inff());
    for (int64_t i = 0; i < n; i += 16) vmax = _mm512_mask_max_ps(vmax, tail_mask(n - i), vmax, _mm512_maskz_loadu_ps(tail_mask(n - i), x + i));
    const __m512 vm = _mm512_set1_ps(_mm512_reduce_max_ps(vmax));
    __m512 acc = _mm512_setzero_ps();
    for (int64_t i = 0; i < n; i += 16) {
        const __mmask16 m = tail_mask(n - i);
        const __m512 e = _mm512_maskz_mov_ps(m, exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, x + i), vm)));
        _mm512_mask_storeu_ps(x + i, m, e);
        acc = _mm512_add_ps(acc, e);
    }
    const __m512 vi = _mm512_set1_ps(1.0f / _mm512_reduce_add_ps(acc));
    for (int64_t i = 0; i < n; i += 16) {
        const __mmask16 m = tail_mask(n - i);
        _mm512_mask_storeu_ps(x + i, m, _mm512_mul_ps(_mm512_maskz_loadu_ps(m, x + i), vi));
    }
}

// llama.cpp's swiglu: full 16-lane groups through exp16_llama, the tail through libm's expf.
void silu_mul(const float * a, const float * b, float * y, int64_t n) {
    const __m512 one = _mm512_set1_ps(1.0f);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m512 va = _mm512_loadu_ps(a + i);
        const __m512 e = exp16_llama(_mm512_sub_ps(_mm512_setzero_ps(), va));
        _mm512_storeu_ps(y + i, _mm512_mul_ps(_mm512_div_ps(va, _mm512_add_ps(one, e)), _mm512_loadu_ps(b + i)));
    }
    for (; i < n; ++i) y[i] = a[i] / (1.0f + expf(-a[i])) * b[i];
}

void add(const float * a, const float * b, float * y, int64_t n) {
    for (int64_t i = 0; i < n; i += 16) {
        const __mmask16 m = tail_mask(n - i);
        _mm512_mask_storeu_ps(y + i, m, _mm512_add_ps(_mm512_maskz_loadu_ps(m, a + i), _mm512_maskz_loadu_ps(m, b + i)));
    }
}

float dot_f32(const float * a, const float * b, int64_t n) {
    __m512 acc = _mm512_setzero_ps();
    for (int64_t i = 0; i < n; i += 16) {
        const __mmask16 m = tail_mask(n - i);
        acc = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, a + i), _mm512_maskz_loadu_ps(m, b + i), acc);
    }
    return _mm512_reduce_add_ps(acc);
}

void axpy_f32(float a, const float * x, float * y, int64_t n) {
    const __m512 va = _mm512_set1_ps(a);
    for (int64_t i = 0; i < n; i += 16) {
        const __mmask16 m = tail_mask(n - i);
        _mm512_mask_storeu_ps(y + i, m, _mm512_fmadd_ps(va, _mm512_maskz_loadu_ps(m, x + i), _mm512_maskz_loadu_ps(m, y + i)));
    }
}

float dot_f32_f16(const float * a, const uint16_t * b, int64_t n) {
    __m512 acc = _mm512_setzero_ps();
    for (int64_t i = 0; i < n; i += 16) {
        const __mmask16 m = tail_mask(n - i);
        const __m512 vb = _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, b + i));
        acc = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, a + i), vb, acc);
    }
    return _mm512_reduce_add_ps(acc);
}

void axpy_f16(float a, const uint16_t * x, float * y, int64_t n) {
    const __m512 va = _mm512_set1_ps(a);
    for (int64_t i = 0; i < n; i += 16) {
        const __mmask16 m = tail_mask(n - i);
        const __m512 vx = _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, x + i));
        _mm512_mask_storeu_ps(y + i, m, _mm512_fmadd_ps(va, vx, _mm512_maskz_loadu_ps(m, y + i)));
    }
}

} // namespace tmill::kernels::avx512
