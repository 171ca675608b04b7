// Paged causal attention for decode on the device. One block per (token, query head); the keys are walked
// in tiles of k_tile: the block's warps compute the tile's scores (lanes split the head dims), then an
// online softmax step rescales the running sum and the value accumulator, whose dims the threads own.
// Everything a (token, head) computes depends only on its own query and keys (batch invariance).
// Contract in cuda/kernels.h.
#include <cuda_fp16.h>

#include <string>

#include "cuda/kernels.h"
#include "cuda/launch-check.h"
#include "cuda/reduce.cuh"

namespace tmill::cuda {

namespace {

constexpr int k_tile = 128;   // keys per tile = threads per block
constexpr int k_dims_per_thread = int(k_attend_max_head_dim / k_tile);

__global__ void attend_kernel(const float * q, int64_t n_head, int64_t group, int64_t head_dim, float scale,
                              const int32_t * n_ctx, const int32_t * block_tables, int32_t max_blocks, int32_t block_size,
                              const uint16_t * k_layer, const uint16_t * v_layer, int64_t n_head_kv, float * out) {
    __shared__ float q16[k_attend_max_head_dim];   // the query rounded to F16
    __shared__ float p[k_tile];                     // this tile's scores, then their exp
    __shared__ float scratch[k_warp];
    const int64_t h = blockIdx.x, t = blockIdx.y, kvh = h / group;
    const int tid = threadIdx.x, lane = tid % k_warp, warp = tid / k_warp, n_warps = blockDim.x / k_warp;
    const float * qh = q + (t * n_head + h) * head_dim;
    for (int64_t d = tid; d < head_dim; d += blockDim.x) q16[d] = __half2float(__float2half_rn(qh[d]));
    __syncthreads();

    const int32_t ctx = n_ctx[t];
    const int32_t * table = block_tables + int64_t(t) * max_blocks;
    const size_t slot_stride = size_t(n_head_kv) * head_dim, block_stride = size_t(block_size) * slot_stride;
    auto row = [&](int32_t j) {   // offset of key/value j of this KV head
        return size_t(table[j / block_size]) * block_stride + size_t(j % block_size) * slot_stride + size_t(kvh) * head_dim;
    };

    float acc[k_dims_per_thread] = {};   // dims tid, tid + k_tile, ...
    float m = -INFINITY, sum = 0.0f;
    for (int32_t j0 = 0; j0 < ctx; j0 += k_tile) {
        const int32_t n = min(k_tile, ctx - j0);
        for (int32_t jj = warp; jj < n; jj += n_warps) {
            const uint16_t * k = k_layer + row(j0 + jj);
            float dot = 0.0f;
            for (int64_t d = lane; d < head_dim; d += k_warp) dot += q16[d] * __half2float(__ushort_as_half(k[d]));
            dot = warp_sum(dot);
            if (lane == 0) p[jj] = dot * scale;
        }
        __syncthreads();
        const float tile_max = block_reduce<true>(tid < n ? p[tid] : -INFINITY, scratch);
        const float m_new = fmaxf(m, tile_max);
        const float alpha = expf(m - m_new);   // 0 on the first tile (m = -inf)
        const float e = tid < n ? expf(p[tid] - m_new) : 0.0f;
        sum = sum * alpha + block_reduce<false>(e, scratch);
        if (tid < n) p[tid] = e;
        __syncthreads();
        for (int c = 0; c < k_dims_per_thread; ++c) {
            const int64_t d = tid + int64_t(c) * k_tile;
            if (d >= head_dim) break;
            float a = acc[c] * alpha;
            for (int32_t jj = 0; jj < n; ++jj) a += p[jj] * __half2float(__ushort_as_half(v_layer[row(j0 + jj) + d]));
            acc[c] = a;
        }
        m = m_new;
        __syncthreads();   // p is rewritten by the next tile
    }
    float * o = out + (t * n_head + h) * head_dim;
    const float inv = 1.0f / sum;
    for (int c = 0; c < k_dims_per_thread; ++c) {
        const int64_t d = tid + int64_t(c) * k_tile;
        if (d < head_dim) o[d] = acc[c] * inv;
    }
}

} // namespace

void attend_f16_paged(const float * q, int64_t n_tok, int64_t n_head, int64_t n_head_kv, int64_t head_dim, float scale,
                      const int32_t * n_ctx, const int32_t * block_tables, int32_t max_blocks, int32_t block_size,
                      const uint16_t * k_layer, const uint16_t * v_layer, float * out, cudaStream_t stream) {
    TM_CHECK(head_dim >= 1 && head_dim <= k_attend_max_head_dim && n_head_kv >= 1 && n_head % n_head_kv == 0 &&
             block_size >= 1 && n_tok <= 65535, invalid_argument,
             "attend_f16_paged: head_dim must be 1.." + std::to_string(k_attend_max_head_dim) +
             ", n_head a multiple of n_head_kv, block_size positive and n_tok at most 65535");
    if (n_tok == 0 || n_head == 0) return;
    attend_kernel<<<dim3(unsigned(n_head), unsigned(n_tok)), k_tile, 0, stream>>>(
        q, n_head, n_head / n_head_kv, head_dim, scale, n_ctx, block_tables, max_blocks, block_size, k_layer, v_layer,
        n_head_kv, out);
    check_launch("attend_f16_paged");
}

} // namespace tmill::cuda
