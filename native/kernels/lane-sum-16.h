// The sum of 16 float lanes in the order of GCC's _mm512_reduce_add_ps (the AVX-512 levels' reduce_add), in plain
// C++: for the scalar references of kernels that end in it and for the emulated AVX-512 level's stand-in for the
// intrinsic. Internal linkage, as tiling.h.
#pragma once

namespace tmill::kernels {
namespace {

// The halves (lane i + lane i + 8), then their halves, then (lane 0 + lane 2) + (lane 1 + lane 3).
inline float lane_sum_16(const float * v) {
    float h8[8], h4[4];
    for (int i = 0; i < 8; ++i) h8[i] = v[8 + i] + v[i];
    for (int i = 0; i < 4; ++i) h4[i] = h8[4 + i] + h8[i];
    return (h4[0] + h4[2]) + (h4[1] + h4[3]);
}

} // namespace
} // namespace tmill::kernels
