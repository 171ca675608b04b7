// Matmul rows for F32, F16 and BF16 weights (activations in the same type), once per ISA.
//
// NOTE(float-matmul): one W-lane accumulator per (row, token) pair over i in steps of W (8 on AVX2, 16 on
// AVX-512), then the n_in % W tail — in the lanes under a mask before the horizontal sum where the ISA has
// masks (AVX-512: zero lanes add exact zeros), else one product at a time after it (AVX2) — and the
// horizontal sum in the level's order (isa::reduce_add). The same sequence in every tile shape, so results
// are batch invariant; it is llama.cpp's prompt-path sgemm order when n_in % W == 0. F32 rows whose length
// is not a multiple of W follow ggml_vec_dot_f32 instead (ggml-dot.h), as llama.cpp does: its tiled sgemm
// declines those (e.g. stories260K's 172-wide feed-forward). BF16 weights on a CPU with AVX512-BF16 take
// matmul_bf16_dot instead (NOTE(bf16-dot)), llama.cpp's VDPBF16PS order there.
#include "kernels/simd/isa.h"
#include "kernels/simd/ggml-dot.h"
#include "kernels/simd/loads.h"
#include "kernels/tiling.h"
#if defined(TM_KERNELS_AVX512_X16)
#include "kernels/simd/avx512-bf16-dot.h"
#endif

namespace tmill::kernels::TM_KERNELS_LEVEL {

namespace {

template <typename L, int R, int T>
void tile_float(const char * w, size_t wb, const char * x, size_t xb, int64_t n_in, float * y, int64_t ldy) {
    constexpr int W = isa::width;
    typename isa::f32 acc[R][T];
    for (int r = 0; r < R; ++r)
        for (int t = 0; t < T; ++t) acc[r][t] = isa::zero();
    const int64_t n_vec = n_in / W * W;
    for (int64_t i = 0; i < n_vec; i += W) {
        typename isa::f32 xv[T];
        for (int t = 0; t < T; ++t) xv[t] = L::vec(x + size_t(t) * xb, i);
        for (int r = 0; r < R; ++r) {
            const typename isa::f32 wv = L::vec(w + size_t(r) * wb, i);
            for (int t = 0; t < T; ++t) acc[r][t] = isa::fmadd(wv, xv[t], acc[r][t]);
        }
    }
    if constexpr (isa::tail_in_lanes) {
        if (n_vec < n_in) {
            const typename isa::mask m = isa::first(n_in - n_vec);
            typename isa::f32 xv[T];
            for (int t = 0; t < T; ++t) xv[t] = L::vec(x + size_t(t) * xb, n_vec, m);
            for (int r = 0; r < R; ++r) {
                const typename isa::f32 wv = L::vec(w + size_t(r) * wb, n_vec, m);
                for (int t = 0; t < T; ++t) acc[r][t] = isa::fmadd(wv, xv[t], acc[r][t]);
            }
        }
    }
    for (int r = 0; r < R; ++r)
        for (int t = 0; t < T; ++t) {
            float s = isa::reduce_add(acc[r][t]);
            if constexpr (!isa::tail_in_lanes)
                for (int64_t i = n_vec; i < n_in; ++i) s += L::one(w + size_t(r) * wb, i) * L::one(x + size_t(t) * xb, i);
            y[t * ldy + r] = s;
        }
}

template <int R, int T>
struct f32_kernel {
    static void fn(const char * w, size_t wb, const char * x, size_t xb, int64_t n, float * y, int64_t ldy) {
        using L = load_f32<isa>;
        if (n % isa::width == 0) {
            tile_float<L, R, T>(w, wb, x, xb, n, y, ldy);
            return;
        }
        for (int r = 0; r < R; ++r)
            for (int t = 0; t < T; ++t) y[t * ldy + r] = ggml_dot_f32<isa, L, L>(w + size_t(r) * wb, x + size_t(t) * xb, n);
    }
};
template <int R, int T>
struct f16_kernel {
    static void fn(const char * w, size_t wb, const char * x, size_t xb, int64_t n, float * y, int64_t ldy) {
        tile_float<load_f16<isa>, R, T>(w, wb, x, xb, n, y, ldy);
    }
};
template <int R, int T>
struct bf16_kernel {
    static void fn(const char * w, size_t wb, const char * x, size_t xb, int64_t n, float * y, int64_t ldy) {
        tile_float<load_bf16<isa>, R, T>(w, wb, x, xb, n, y, ldy);
    }
};

// Up to 4 tokens: sets of 4 rows a quarter of the range apart (NOTE(few-token-sets)); more: the tile walk in tiles of
// R_MANY rows (the level's float_rows_many, F16's f16_rows_many), whose
// one-token tiles of 4 adjacent rows read F16 weights from memory at about half the read bandwidth. The scratch
// one-matmul program, 2048 -> 5632 from memory, 2 threads, AMD EPYC (Zen 4), one interleaved round, G multiply-adds
// a second: F16 1, 2 and 4 tokens avx2 15.5, 20.7 and 34.8 -> 22.0, 36.6 and 45.0, avx512 15.2, 28.8 and 47.2 ->
// 22.7, 40.5 and 56.5; BF16 avx2 1 and 4 tokens 14.3 and 33.4 -> 21.6 and 44.5; F32 avx2 1 token 8.3 -> 9.7. At 8
// tokens the walk's 4 x 4 tiles were faster on avx512.
constexpr int64_t k_float_sets_max_tokens = 4;

template <template <int, int> class K, int R_MANY = isa::float_rows_many>
void float_rows(const void * w, size_t wb, const void * x, size_t xb, int64_t n_tok, int64_t n_in, int64_t r0, int64_t r1, float * y,
                int64_t ldy) {
    if (n_tok <= k_float_sets_max_tokens) few_tokens<K, 4>(w, wb, x, xb, n_tok, n_in, r0, r1, y, ldy);
    else tile_walk<K, 4, R_MANY>(w, wb, x, xb, n_tok, n_in, r0, r1, y, ldy);
}

} // namespace

TM_MATMUL_ROWS_ENTRY(matmul_f32, float_rows<f32_kernel>)
TM_MATMUL_ROWS_ENTRY(matmul_f16, float_rows<f16_kernel, isa::f16_rows_many>)
TM_MATMUL_ROWS_ENTRY(matmul_bf16, float_rows<bf16_kernel>)
#if defined(TM_KERNELS_AVX512_X16)
TM_MATMUL_ROWS_ENTRY(matmul_bf16_dot, float_rows<bf16_dot_kernel>)
#endif

} // namespace tmill::kernels::TM_KERNELS_LEVEL
