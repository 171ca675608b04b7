// BF16 weights against BF16 activations by VDPBF16PS (AVX512-BF16): the avx512 level's matmul_bf16_dot, which
// kernels_for puts in place of matmul_bf16 where the CPU has the extension. AVX-512 only; included by
// matmul-float.cpp. Internal linkage, as tiling.h, in the level's namespace (so the addon's ISA-isolation test sees
// these functions as AVX-512 code).
//
// NOTE(bf16-dot): llama.cpp's builds for CPUs with AVX512-BF16 (zen4, sapphirerapids) multiply BF16 weights with
// VDPBF16PS, which takes 32 products per instruction where an FMA on converted lanes takes 16: with n_in a
// multiple of 32 in its prompt kernel's order (tinyBLAS: one 16-lane accumulator per (row, token) over steps of 32
// elements, then _mm512_reduce_add_ps), otherwise ggml_vec_dot_bf16's (two accumulators over steps of 64, their
// sums and the leftover products added in double). These kernels compute the same, so on those CPUs BF16 weights
// give llama.cpp's bits, and each (row, token) pair is computed the same way in every tile shape (batch
// invariance). Their scalar reference is ref::matmul_bf16_dot; the instruction's roundings are NOTE(bf16-dot-step).
// Measured with a scratch one-matmul program (2048 -> 5632, 64 tokens, one thread, AMD EPYC Zen 4): 66 G
// multiply-adds a second in 4 x 4 tiles against 38 for the FMA kernel of matmul_bf16 (5 x 4: 66, 6 x 4: 62).
#pragma once

#include "kernels/tiling.h"

namespace tmill::kernels::TM_KERNELS_LEVEL {
namespace {

constexpr int64_t k_bf16_dot_step = 32;   // BF16 elements per VDPBF16PS

// ggml_vec_dot_bf16's order, for rows whose length is not a multiple of 32.
TM_AVX512_BF16_TARGET float bf16_dot_ggml(const uint16_t * w, const uint16_t * x, int64_t n) {
    using V = avx512_traits;
    V::f32 c1 = V::zero(), c2 = V::zero();
    int64_t i = 0;
    for (; i + 2 * k_bf16_dot_step <= n; i += 2 * k_bf16_dot_step) {
        c1 = V::dot_bf16_pairs(c1, _mm512_loadu_si512(w + i), _mm512_loadu_si512(x + i));
        c2 = V::dot_bf16_pairs(c2, _mm512_loadu_si512(w + i + k_bf16_dot_step), _mm512_loadu_si512(x + i + k_bf16_dot_step));
    }
    double sum = 0.0;
    sum += double(V::reduce_add(c1));
    sum += double(V::reduce_add(c2));
    for (; i < n; ++i) sum += double(load_bf16<V>::one(w, i) * load_bf16<V>::one(x, i));
    return float(sum);
}

// An R x T tile (kernels/tiling.h): w at its first row, x at its first token, y[t * ldy + r].
template <int R, int T>
struct bf16_dot_kernel {
    TM_AVX512_BF16_TARGET static void fn(const char * w, size_t wb, const char * x, size_t xb, int64_t n, float * y, int64_t ldy) {
        using V = avx512_traits;
        if (n % k_bf16_dot_step != 0) {
            for (int r = 0; r < R; ++r)
                for (int t = 0; t < T; ++t)
                    y[t * ldy + r] = bf16_dot_ggml(reinterpret_cast<const uint16_t *>(w + size_t(r) * wb),
                                                   reinterpret_cast<const uint16_t *>(x + size_t(t) * xb), n);
            return;
        }
        V::f32 acc[R][T];
        for (int r = 0; r < R; ++r)
            for (int t = 0; t < T; ++t) acc[r][t] = V::zero();
        for (int64_t i = 0; i < n; i += k_bf16_dot_step) {
            __m512i xv[T];
            for (int t = 0; t < T; ++t) xv[t] = _mm512_loadu_si512(x + size_t(t) * xb + size_t(i) * 2);
            for (int r = 0; r < R; ++r) {
                const __m512i wv = _mm512_loadu_si512(w + size_t(r) * wb + size_t(i) * 2);
                for (int t = 0; t < T; ++t) acc[r][t] = V::dot_bf16_pairs(acc[r][t], wv, xv[t]);
            }
        }
        for (int r = 0; r < R; ++r)
            for (int t = 0; t < T; ++t) y[t * ldy + r] = V::reduce_add(acc[r][t]);
    }
};

} // namespace
} // namespace tmill::kernels::TM_KERNELS_LEVEL
