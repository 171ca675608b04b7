// Warp and block reductions in a fixed order (butterfly shuffles, then warp results in warp order), so a
// row's result depends only on its own data and the block size, never on other rows (batch invariance).
#pragma once

#include <cuda_runtime.h>

namespace tmill::cuda {

constexpr int k_warp = 32;

__device__ __forceinline__ float warp_sum(float v) {
    for (int o = k_warp / 2; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

__device__ __forceinline__ float warp_max(float v) {
    for (int o = k_warp / 2; o > 0; o /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

// Sum (or max) over the block; every thread gets the result. scratch: (32) shared floats; blockDim.x a
// multiple of 32. Ends with a barrier, so scratch may be reused at once.
template <bool is_max>
__device__ __forceinline__ float block_reduce(float v, float * scratch) {
    const int lane = threadIdx.x % k_warp, warp = threadIdx.x / k_warp, n_warps = blockDim.x / k_warp;
    v = is_max ? warp_max(v) : warp_sum(v);
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    float r = scratch[0];
    for (int w = 1; w < n_warps; ++w) r = is_max ? fmaxf(r, scratch[w]) : r + scratch[w];
    __syncthreads();
    return r;
}

} // namespace tmill::cuda
