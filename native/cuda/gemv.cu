// Decode GEMVs on the device: one warp per (output row, token). Lane l takes the row's 32-blocks (or, for
// F16, elements) l, l + 32, ...; the lanes' partial sums meet in a fixed butterfly, so each output depends
// only on its row and its token (batch invariance). Contracts in cuda/kernels.h.
#include <cuda_fp16.h>

#include <string>

#include "cuda/kernels.h"
#include "cuda/launch-check.h"
#include "cuda/reduce.cuh"
#include "quant/q4-0.h"
#include "quant/q8-0.h"

namespace tmill::cuda {

namespace {

constexpr int k_warps_per_block = 4;

__device__ __forceinline__ float f16(uint16_t bits) { return __half2float(__ushort_as_half(bits)); }

// Integer dot of one Q8_0 weight block with one Q8_0 activation block.
__device__ __forceinline__ int dot_block(const quant::block_q8_0 & w, const quant::block_q8_0 & x) {
    int s = 0;
#pragma unroll
    for (int j = 0; j < quant::qk8_0; ++j) s += int(w.qs[j]) * int(x.qs[j]);
    return s;
}

// Q4_0 element j < 16 is qs[j]'s low nibble, j + 16 its high nibble, both offset by 8.
__device__ __forceinline__ int dot_block(const quant::block_q4_0 & w, const quant::block_q8_0 & x) {
    int s = 0;
#pragma unroll
    for (int j = 0; j < quant::qk4_0 / 2; ++j) {
        s += (int(w.qs[j] & 0x0f) - 8) * int(x.qs[j]);
        s += (int(w.qs[j] >> 4) - 8) * int(x.qs[j + quant::qk4_0 / 2]);
    }
    return s;
}

template <typename block_w>
__global__ void gemv_q_kernel(const char * w, size_t w_row_bytes, const char * x, size_t x_row_bytes, int64_t nb,
                              int64_t n_out, float * y, int64_t ldy) {
    const int64_t r = int64_t(blockIdx.x) * k_warps_per_block + threadIdx.x / k_warp;
    const int64_t t = blockIdx.y;
    const int lane = threadIdx.x % k_warp;
    if (r >= n_out) return;
    const auto * wr = reinterpret_cast<const block_w *>(w + size_t(r) * w_row_bytes);
    const auto * xr = reinterpret_cast<const quant::block_q8_0 *>(x + size_t(t) * x_row_bytes);
    float sum = 0.0f;
    for (int64_t b = lane; b < nb; b += k_warp) sum += float(dot_block(wr[b], xr[b])) * (f16(wr[b].d) * f16(xr[b].d));
    sum = warp_sum(sum);
    if (lane == 0) y[t * ldy + r] = sum;
}

__global__ void gemv_f16_kernel(const char * w, size_t w_row_bytes, const float * x, int64_t n_in, int64_t n_out,
                                float * y, int64_t ldy) {
    const int64_t r = int64_t(blockIdx.x) * k_warps_per_block + threadIdx.x / k_warp;
    const int64_t t = blockIdx.y;
    const int lane = threadIdx.x % k_warp;
    if (r >= n_out) return;
    const auto * wr = reinterpret_cast<const uint16_t *>(w + size_t(r) * w_row_bytes);
    const float * xr = x + t * n_in;
    float sum = 0.0f;
    for (int64_t i = lane; i < n_in; i += k_warp) sum += f16(wr[i]) * __half2float(__float2half_rn(xr[i]));
    sum = warp_sum(sum);
    if (lane == 0) y[t * ldy + r] = sum;
}

dim3 grid_of(int64_t n_out, int64_t n_tok) {
    return dim3(unsigned((n_out + k_warps_per_block - 1) / k_warps_per_block), unsigned(n_tok));
}

template <typename block_w>
void gemv_q(const char * name, const void * w, size_t w_row_bytes, const void * x, size_t x_row_bytes, int64_t n_tok,
            int64_t n_in, int64_t n_out, float * y, int64_t ldy, cudaStream_t stream) {
    TM_CHECK(n_in % quant::qk8_0 == 0 && n_tok <= 65535, invalid_argument,
             std::string(name) + ": n_in must be a multiple of 32 and n_tok at most 65535");
    if (n_tok == 0 || n_out == 0) return;
    gemv_q_kernel<block_w><<<grid_of(n_out, n_tok), k_warps_per_block * k_warp, 0, stream>>>(
        static_cast<const char *>(w), w_row_bytes, static_cast<const char *>(x), x_row_bytes, n_in / quant::qk8_0, n_out, y, ldy);
    check_launch(name);
}

} // namespace

void gemv_q8_0(const void * w, size_t w_row_bytes, const void * x, size_t x_row_bytes, int64_t n_tok, int64_t n_in,
               int64_t n_out, float * y, int64_t ldy, cudaStream_t stream) {
    gemv_q<quant::block_q8_0>("gemv_q8_0", w, w_row_bytes, x, x_row_bytes, n_tok, n_in, n_out, y, ldy, stream);
}

void gemv_q4_0(const void * w, size_t w_row_bytes, const void * x, size_t x_row_bytes, int64_t n_tok, int64_t n_in,
               int64_t n_out, float * y, int64_t ldy, cudaStream_t stream) {
    gemv_q<quant::block_q4_0>("gemv_q4_0", w, w_row_bytes, x, x_row_bytes, n_tok, n_in, n_out, y, ldy, stream);
}

void gemv_f16(const void * w, size_t w_row_bytes, const float * x, int64_t n_tok, int64_t n_in, int64_t n_out,
              float * y, int64_t ldy, cudaStream_t stream) {
    TM_CHECK(n_in % 32 == 0 && n_tok <= 65535, invalid_argument, "gemv_f16: n_in must be a multiple of 32 and n_tok at most 65535");
    if (n_tok == 0 || n_out == 0) return;
    gemv_f16_kernel<<<grid_of(n_out, n_tok), k_warps_per_block * k_warp, 0, stream>>>(static_cast<const char *>(w), w_row_bytes,
                                                                                      x, n_in, n_out, y, ldy);
    check_launch("gemv_f16");
}

} // namespace tmill::cuda
