// AVX2 matmul rows for F32, F16 and BF16 weights (activations in the same type).
//
// NOTE(avx2-float): one 8-lane accumulator per (row, token) pair over i in steps of 8, then a
// horizontal sum, then the n_in % 8 tail added in index order — the same sequence in every tile shape,
// so results are batch invariant (llama.cpp's prompt-path sgemm order when n_in % 8 == 0). F32 rows whose
// length is not a multiple of 8 follow ggml_vec_dot_f32 instead (dot_vec_order), as llama.cpp does.
#include "kernels/avx2/avx2.h"
#include "kernels/hsum.h"
#include "kernels/tiling.h"

#include <immintrin.h>

namespace tmill::kernels::avx2 {

namespace {

struct load_f32 {
    static __m256 vec(const char * p, int64_t i) { return _mm256_loadu_ps(reinterpret_cast<const float *>(p) + i); }
    static float one(const char * p, int64_t i) { return reinterpret_cast<const float *>(p)[i]; }
};

struct load_f16 {
    static __m256 vec(const char * p, int64_t i) {
        return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i *>(reinterpret_cast<const uint16_t *>(p) + i)));
    }
    static float one(const char * p, int64_t i) { return _cvtsh_ss(reinterpret_cast<const uint16_t *>(p)[i]); }
};

struct load_bf16 {
    static __m256 vec(const char * p, int64_t i) {
        const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i *>(reinterpret_cast<const uint16_t *>(p) + i));
        return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
    }
    static float one(const char * p, int64_t i) {
        const uint32_t bits = uint32_t(reinterpret_cast<const uint16_t *>(p)[i]) << 16;
        return _mm_cvtss_f32(_mm_castsi128_ps(_mm_cvtsi32_si128(int(bits))));
    }
};

template <typename L, int R, int T>
void tile_float(const char * w, size_t wb, const char * x, size_t xb, int64_t n_in, float * y, int64_t ldy) {
    __m256 acc[R][T];
    for (int r = 0; r < R; ++r)
        for (int t = 0; t < T; ++t) acc[r][t] = _mm256_setzero_ps();
    const int64_t n_vec = n_in / 8 * 8;
    for (int64_t i = 0; i < n_vec; i += 8) {
        __m256 xv[T];
        for (int t = 0; t < T; ++t) xv[t] = L::vec(x + size_t(t) * xb, i);
        for (int r = 0; r < R; ++r) {
            const __m256 wv = L::vec(w + size_t(r) * wb, i);
            for (int t = 0; t < T; ++t) acc[r][t] = _mm256_fmadd_ps(wv, xv[t], acc[r][t]);
        }
    }
    for (int r = 0; r < R; ++r)
        for (int t = 0; t < T; ++t) {
            float s = hsum8(acc[r][t]);
            for (int64_t i = n_vec; i < n_in; ++i) s += L::one(w + size_t(r) * wb, i) * L::one(x + size_t(t) * xb, i);
            y[t * ldy + r] = s;
        }
}

// dot(w, x) in ggml_vec_dot_f32's AVX2 order: 4 accumulators over steps of 32, reduced
// (s0+s2)+(s1+s3), halves added, two horizontal adds, then the leftovers one by one as F32 FMAs (the
// compiler contracts ggml's `sumf += x[i]*y[i]`). llama.cpp takes this path for an F32 matmul whose
// row length is not a multiple of 8 (its tiled sgemm declines those).
float dot_vec_order(const float * w, const float * x, int64_t n) {
    const int64_t np = n & ~int64_t(31);
    __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    for (int64_t i = 0; i < np; i += 32) {
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(w + i), _mm256_loadu_ps(x + i), s0);
        s1 = _mm256_fmadd_ps(_mm256_loadu_ps(w + i + 8), _mm256_loadu_ps(x + i + 8), s1);
        s2 = _mm256_fmadd_ps(_mm256_loadu_ps(w + i + 16), _mm256_loadu_ps(x + i + 16), s2);
        s3 = _mm256_fmadd_ps(_mm256_loadu_ps(w + i + 24), _mm256_loadu_ps(x + i + 24), s3);
    }
    const __m256 s = _mm256_add_ps(_mm256_add_ps(s0, s2), _mm256_add_ps(s1, s3));
    const __m128 halves = _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
    const __m128 pairs = _mm_hadd_ps(halves, halves);
    __m128 sum = _mm_hadd_ps(pairs, pairs);
    for (int64_t i = np; i < n; ++i) sum = _mm_fmadd_ss(_mm_set_ss(w[i]), _mm_set_ss(x[i]), sum);
    return _mm_cvtss_f32(sum);
}

template <int R, int T>
struct f32_kernel {
    static void fn(const char * w, size_t wb, const char * x, size_t xb, int64_t n, float * y, int64_t ldy) {
        if (n % 8 == 0) {
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
    tile_walk<f32_kernel, 4, 2>(w, wb, x, xb, n_tok, n_in, r0, r1, y, ldy);
}

void matmul_rows_f16(const void * w, size_t wb, const void * x, size_t xb, int64_t n_tok, int64_t n_in,
                     int64_t r0, int64_t r1, float * y, int64_t ldy) {
    tile_walk<f16_kernel, 4, 2>(w, wb, x, xb, n_tok, n_in, r0, r1, y, ldy);
}

void matmul_rows_bf16(const void * w, size_t wb, const void * x, size_t xb, int64_t n_tok, int64_t n_in,
                      int64_t r0, int64_t r1, float * y, int64_t ldy) {
    tile_walk<bf16_kernel, 4, 2>(w, wb, x, xb, n_tok, n_in, r0, r1, y, ldy);
}

} // namespace tmill::kernels::avx2
