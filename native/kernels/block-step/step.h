// The float step of the "block step" numerics of the 32-block int8 matmuls (Q8_0, Q4_0, IQ4_NL and Q5_0
// weights against Q8_0 activations) on the avx512 and avx512+amx levels (docs/kernels.md, "Matrix products"
// and "The AMX path"): for each 32-block b of a (weight row, activation row) pair, in block order from
// acc = 0, acc = fma(d_w * d_x, float(c_b), acc), c_b being the exact int32 dot of the block's 32 int8
// weights with its 32 int8 activations (at most 32 * 128 * 128 = 2^19 in magnitude, so the conversion is
// exact too). d_w * d_x is rounded to float before the fma, as ggml-cpu/amx's Q8_0 kernels round it
// (acc_C: _mm512_fmadd_ps(cvt(tile), _mm512_mul_ps(d_w, d_x), acc)); the integer part has no order. The
// scalar reference (kernels/ref/matmul-q8-block-step.cpp), the AVX-512 kernels (kernels/simd/avx512-block-step.h)
// and the AMX tiles (kernels/amx/matmul-q8-0.cpp) all compute this expression, lane by lane.
#pragma once

#include <cmath>
#include <cstdint>

namespace tmill::kernels {

inline float block_step(float acc, float d_w, float d_x, int32_t block_dot) {
    const float scale = d_w * d_x;
    return std::fma(scale, float(block_dot), acc);
}

} // namespace tmill::kernels
