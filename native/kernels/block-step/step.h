// The float step of the "block step" numerics of the 32-block int8 matmuls (Q8_0, Q4_0, IQ4_NL and Q5_0
// weights against Q8_0 activations; Q4_1 and Q5_1 against Q8_1, with their minimum) and of Q6_K's super-blocks
// (against Q8_K) on the avx512 and avx512+amx levels (docs/kernels.md, "Matrix products"
// and "The AMX path"): for each 32-block b of a (weight row, activation row) pair, in block order from
// acc = 0, acc = fma(d_w * d_x, float(c_b), acc), c_b being the exact int32 dot of the block's 32 int8
// weights with its 32 int8 activations (at most 32 * 128 * 128 = 2^19 in magnitude, so the conversion is
// exact too). d_w * d_x is rounded to float before the fma, as ggml-cpu/amx's Q8_0 kernels round it
// (acc_C: _mm512_fmadd_ps(cvt(tile), _mm512_mul_ps(d_w, d_x), acc)); the integer part has no order. The
// scalar reference (kernels/ref/matmul-q8-block-step.cpp), the AVX-512 kernels (kernels/simd/avx512-block-step.h,
// avx512-block-step-min.h) and the AMX tiles (kernels/amx/matmul-q8-0.cpp) all compute these expressions, lane by
// lane.
#pragma once

#include <cmath>
#include <cstdint>

namespace tmill::kernels {

inline float block_step(float acc, float d_w, float d_x, int32_t block_dot) {
    const float scale = d_w * d_x;
    return std::fma(scale, float(block_dot), acc);
}

// The formats with a per-block minimum m_w (Q4_1, Q5_1; their int8 weights the unsigned levels, w = d_w * q + m_w)
// add m_w * s_x (s_x = d_x * sum(x_q), the Q8_1 block's F16 sum) with a second fma after the block's step, as
// ggml-cpu/amx's Q4_1 kernel does (acc_C: fma(cvt(tile), d_w * d_x, acc), then fma(m_w, s_x, acc)).
// Q6_K's step per 256-element super-block (ggml-cpu/amx's Q6_K arithmetic: acc_C, fma(cvt(sumi), d_x * d_w, acc)):
// isum = sum_e sc[e / 16] * (q_e - 32) * x_e, exact in int32 (at most 256 * 128 * 32 * 127 < 2^31; its conversion
// rounds to nearest even past 2^24, the same everywhere), then acc = fma(float(isum), d_x * d_w, acc), the scale
// product rounded first.
inline float block_step_k(float acc, float d_w, float d_x, int32_t isum) {
    const float scale = d_x * d_w;
    return std::fma(float(isum), scale, acc);
}

inline float block_step_min(float acc, float d_w, float d_x, int32_t block_dot, float m_w, float s_x) {
    return std::fma(m_w, s_x, block_step(acc, d_w, d_x, block_dot));
}

} // namespace tmill::kernels
