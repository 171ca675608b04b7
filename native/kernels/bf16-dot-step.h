// One lane of VDPBF16PS (AVX512-BF16) in plain C++, for the scalar reference of the BF16 pair dot
// (kernels/ref/matmul-bf16-dot.cpp) and the emulated AVX-512 level's stand-in for the instruction
// (kernels/simd/emulated-avx512.h). Internal linkage, as tiling.h.
//
// NOTE(bf16-dot-step): measured on the AMD EPYC (Zen 4) against 3.2 million random lanes, every one equal: lane j
// adds to its F32 accumulator the product of the BF16 pair 2j + 1 and then that of the pair 2j, each add rounded
// once to F32 (to nearest even) from the exact product; BF16 inputs and the accumulator with a zero exponent
// (denormals) count as signed zeros, and a result below the smallest normal F32 is flushed to a signed zero (the
// product itself is not flushed: the smallest normal plus 2^-140 gives the smallest normal plus one step). This is
// Intel's documented order for the instruction. An exact product added in double and rounded to F32 once is the
// same single rounding: a BF16 product has 16 significant bits, so the double sum is exact, or is off only far
// below half an F32 step of the larger operand.
#pragma once

#include <cstdint>
#include <cstring>

namespace tmill::kernels {
namespace {
namespace bf16_dot_step {

inline float zero_if_denormal(float v) {
    uint32_t u;
    std::memcpy(&u, &v, 4);
    if ((u & 0x7f800000u) == 0) u &= 0x80000000u;
    std::memcpy(&v, &u, 4);
    return v;
}

inline float from_bf16(uint16_t h) {
    const uint32_t u = uint32_t(h) << 16;
    float v;
    std::memcpy(&v, &u, 4);
    return zero_if_denormal(v);
}

// acc + a * b, rounded once, as one of the instruction's two adds.
inline float add_product(float acc, uint16_t a, uint16_t b) {
    const double sum = double(zero_if_denormal(acc)) + double(from_bf16(a)) * double(from_bf16(b));
    return zero_if_denormal(float(sum));
}

// Lane j of VDPBF16PS(acc, a, b) for a and b of 32 BF16 each.
inline float lane(float acc, const uint16_t * a, const uint16_t * b, int j) {
    return add_product(add_product(acc, a[2 * j + 1], b[2 * j + 1]), a[2 * j], b[2 * j]);
}

} // namespace bf16_dot_step
} // namespace
} // namespace tmill::kernels
