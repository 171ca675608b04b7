// Row operations of the forward pass on the device: RMSNorm, RoPE, SiLU×mul, and the Q8_0 quantization of
// activation rows that the quantized GEMVs read. Contracts in cuda/kernels.h.
#include <cuda_fp16.h>

#include <cmath>
#include <string>

#include "cuda/kernels.h"
#include "cuda/launch-check.h"
#include "cuda/reduce.cuh"
#include "quant/q8-0.h"

namespace tmill::cuda {

namespace {

constexpr int k_norm_threads = 256;

// One block per row.
__global__ void rmsnorm_kernel(const float * x, const float * w, float * y, int64_t n, float eps) {
    __shared__ float scratch[k_warp];
    const float * xr = x + blockIdx.x * n;
    float * yr = y + blockIdx.x * n;
    float sum = 0.0f;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) sum += xr[i] * xr[i];
    sum = block_reduce<false>(sum, scratch);
    const float scale = 1.0f / sqrtf(sum / float(n) + eps);
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) yr[i] = xr[i] * scale * w[i];
}

// One thread per (row, head, rotated pair).
__global__ void rope_kernel(float * x, int64_t n_rows, int64_t n_head, int64_t head_dim, int64_t half,
                            const int32_t * pos, float theta_scale, float freq_scale, bool neox) {
    const int64_t id = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (id >= n_rows * n_head * half) return;
    const int64_t i = id % half, rh = id / half, r = rh / n_head;
    // ggml's recurrence theta_{k+1} = theta_k * theta_scale, multiplied out in the reference's order.
    float theta = float(pos[r]);
    for (int64_t k = 0; k < i; ++k) theta *= theta_scale;
    const float angle = freq_scale * theta;
    const float c = cosf(angle), s = sinf(angle);
    float * v = x + rh * head_dim;
    const int64_t i0 = neox ? i : 2 * i, i1 = neox ? i + half : 2 * i + 1;
    const float x0 = v[i0], x1 = v[i1];
    v[i0] = x0 * c - x1 * s;
    v[i1] = x0 * s + x1 * c;
}

__global__ void silu_mul_kernel(const float * a, const float * b, float * y, int64_t n) {
    const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a[i] / (1.0f + expf(-a[i])) * b[i];
}

// One warp per 32-element block; lane j quantizes element j.
__global__ void quantize_q8_0_kernel(const float * x, quant::block_q8_0 * y, int64_t n_blocks) {
    const int64_t b = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / k_warp;
    const int lane = threadIdx.x % k_warp;
    if (b >= n_blocks) return;
    const float v = x[b * quant::qk8_0 + lane];
    const float amax = warp_max(fabsf(v));
    const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
    y[b].qs[lane] = int8_t(__float2int_rn(v * id));
    if (lane == 0) y[b].d = __half_as_ushort(__float2half_rn(amax / 127.0f));
}

unsigned grid_for(int64_t n, int threads) { return unsigned((n + threads - 1) / threads); }

} // namespace

void rmsnorm(const float * x, const float * w, float * y, int64_t n_rows, int64_t n, float eps, cudaStream_t stream) {
    if (n_rows == 0) return;
    rmsnorm_kernel<<<unsigned(n_rows), k_norm_threads, 0, stream>>>(x, w, y, n, eps);
    check_launch("rmsnorm");
}

void rope(float * x, int64_t n_rows, int64_t n_head, int64_t head_dim, int64_t n_rot, const int32_t * pos,
          float freq_base, float freq_scale, kernels::rope_style style, cudaStream_t stream) {
    TM_CHECK(n_rot >= 0 && n_rot % 2 == 0 && n_rot <= head_dim && n_rot <= kernels::k_rope_max_rot, invalid_argument,
             "rope: n_rot must be even, <= head_dim and <= " + std::to_string(kernels::k_rope_max_rot));
    const int64_t half = n_rot / 2, n = n_rows * n_head * half;
    if (n == 0) return;
    const float theta_scale = std::pow(freq_base, -2.0f / float(n_rot));   // on the host, as the reference
    rope_kernel<<<grid_for(n, 256), 256, 0, stream>>>(x, n_rows, n_head, head_dim, half, pos, theta_scale, freq_scale,
                                                      style == kernels::rope_style::neox);
    check_launch("rope");
}

void silu_mul(const float * a, const float * b, float * y, int64_t n, cudaStream_t stream) {
    if (n == 0) return;
    silu_mul_kernel<<<grid_for(n, 256), 256, 0, stream>>>(a, b, y, n);
    check_launch("silu_mul");
}

void quantize_q8_0(const float * x, void * y, int64_t n_rows, int64_t n, cudaStream_t stream) {
    TM_CHECK(n % quant::qk8_0 == 0, invalid_argument, "quantize_q8_0: n must be a multiple of 32");
    const int64_t n_blocks = n_rows * (n / quant::qk8_0);
    if (n_blocks == 0) return;
    quantize_q8_0_kernel<<<grid_for(n_blocks * k_warp, 256), 256, 0, stream>>>(x, static_cast<quant::block_q8_0 *>(y), n_blocks);
    check_launch("quantize_q8_0");
}

} // namespace tmill::cuda
