// AVX-512 matmul rows for F32, F16 and BF16 weights (activations in the same type).
//
// NOTE(avx512-float): one 16-lane accumulator per (row, token) pair over i in steps of 16, the
// n_in % 16 tail through masked loads (zero lanes add exact zeros), then one horizontal sum — the
// same sequence in every tile shape (batch invariance), and llama.cpp's prompt-path sgemm order. F32 rows
// whose length is not a multiple of 16 follow ggml_vec_dot_f32 instead (dot_vec_order), as llama.cpp does.
#include "kernels/avx512/avx512.h"
#include "kernels/tiling.h"

#include <immintrin.h>

// GCC 12's avx512fintrin.h builds _mm512_reduce_*/_mm512_insert* on self-initialised "undefined"
// vectors, which -Wuninitialized reports as uninitialised; the lanes are never read.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace tmill::kernels::avx512 {

namespace {

struct load_f32 {
    static __m512 vec(const char * p, int64_t i, __mmask16 m) {
        return _mm512_maskz_loadu_ps(m, reinterpret_cast<const float *>(p) + i);
    }
};
struct load_f16 {
    static __m512 vec(const char * p, int64_t i, __mmask16 m) {
        return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, reinterpret_cast<const uint16_t *>(p) + i));
    }
};
struct load_bf16 {
    static __m512 vec(const char * p, int64_t i, __mmask16 m) {
        const __m256i h = _mm256_maskz_loadu_epi16(m, reinterpret_cast<const uint16_t *>(p) + i);
        return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
    }
};

template <typename L, int R, int T>
void tile_float(const char * w, size_t wb, const char * x, size_t xb, int64_t n_in, float * y, int64_t ldy) {
    __m512 acc[R][T];
    for (int r = 0; r < R; ++r)
        for (int t = 0; t < T; ++t) acc[r][t] = _mm512_setzero_ps();
    for (int64_t i = 0; i < n_in; i += 16) {
        const __mmask16 m = n_in - i >= 16 ? __mmask16(0xffff) : __mmask16((1u << (n_in - i)) - 1);
        __m512 xv[T];
        for (int t = 0; t < T; ++t) xv[t] = L::vec(x + size_t(t) * xb, i, m);
        for (int r = 0; r < R; ++r) {
            const __m512 wv = L::vec(w + size_t(r) * wb, i, m);
            for (int t = 0; t < T; ++t) acc[r][t] = _mm512_fmadd_ps(wv, xv[t], acc[r][t]);
        }
    }
    for (int r = 0; r < R; ++r)
        for (int t = 0; t < T; ++t) y[t * ldy + r] = _mm512_reduce_add_ps(acc[r][t]);
}

// dot(w, x) in ggml_vec_dot_f32's AVX-512 order: 4 accumulators over steps of 64, reduced
// (s0+s2)+(s1+s3), then the leftovers one by one as F32 FMAs (the compiler contracts ggml's
// `sumf += x[i]*y[i]`). llama.cpp takes this path for an F32 matmul whose row length is not a multiple
// of 16 (its tiled sgemm declines those), e.g. stories260K's 172-wide feed-forward.
float dot_vec_order(const float * w, const float * x, int64_t n) {
    const int64_t np = n & ~int64_t(63);
    __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    for (int64_t i = 0; i < np; i += 64) {
        s0 = _mm512_fmadd_ps(_mm512_loadu_ps(w + i), _mm512_loadu_ps(x + i), s0);
        s1 = _mm512_fmadd_ps(_mm512_loadu_ps(w + i + 16), _mm512_loadu_ps(x + i + 16), s1);
        s2 = _mm512_fmadd_ps(_mm512_loadu_ps(w + i + 32), _mm512_loadu_ps(x + i + 32), s2);
        s3 = _mm512_fmadd_ps(_mm512_loadu_ps(w + i + 48), _mm512_loadu_ps(x + i + 48), s3);
    }
    __m128 sum = _mm_set_ss(_mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s2), _mm512_add_ps(s1, s3))));
    for (int64_t i = np; i < n; ++i) sum = _mm_fmadd_ss(_mm_set_ss(w[i]), _mm_set_ss(x[i]), sum);
    return _mm_cvtss_f32(sum);
}

template <int R, int T>
struct f32_kernel {
    static void fn(const char * w, size_t wb, const char * x, size_t xb, int64_t n, float * y, int64_t ldy) {
        if (n % 16 == 0) {
            tile_float<load_f32, R, T>(w, wb, x, xb, n, y, ldy);
            return;
        }
        for (int r = 0; r < R; ++r)
            for (int t = 0; t < T; ++t)
                y[t * ldy + r] = dot_vec_order(reinterpret_cast<const float *>(w + size_t(r) * wb),
                                               reinterpret_cast<const float *>(x + size_t(t) * xb), n);
    }
};
template <int R, int T>
struct f16_kernel {
    static void fn(const char * w, size_t wb, const char * x, size_t xb, int64_t n, float * y, int64_t ldy) {
        tile_float<load_f16, R, T>(w, wb, x, xb, n, y, ldy);
    }
};
template <int R, int T>
struct bf16_kernel {
    static void fn(const char * w, size_t wb, const char * x, size_t xb, int64_t n, float * y, int64_t ldy) {
        tile_float<load_bf16, R, T>(w, wb, x, xb, n, y, ldy);
    }
};

} // namespace

void matmul_rows_f32(const void * w, size_t wb, const void * x, size_t xb, int64_t n_tok, int64_t n_in,
                     int64_t r0, int64_t r1, float * y, int64_t ldy) {
    tile_walk<f32_kernel, 4, 4>(w, wb, x, xb, n_tok, n_in, r0, r1, y, ldy);
}

void matmul_rows_f16(const void * w, size_t wb, const void * x, size_t xb, int64_t n_tok, int64_t n_in,
                     int64_t r0, int64_t r1, float * y, int64_t ldy) {
    tile_walk<f16_kernel, 4, 4>(w, wb, x, xb, n_tok, n_in, r0, r1, y, ldy);
}

void matmul_rows_bf16(const void * w, size_t wb, const void * x, size_t xb, int64_t n_tok, int64_t n_in,
                      int64_t r0, int64_t r1, float * y, int64_t ldy) {
    tile_walk<bf16_kernel, 4, 4>(w, wb, x, xb, n_tok, n_in, r0, r1, y, ldy);
}

} // namespace tmill::kernels::avx512
