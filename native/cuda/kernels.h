// Device kernels of the llama forward pass, callable from host C++ (the .cu files hold their bodies).
// Each mirrors the contract of its CPU counterpart in kernels/kernels.h over device pointers, batched over
// rows, and is checked against the CPU reference on a GPU by tokenmill_cuda_tests (test/cuda).
// Every launcher enqueues on `stream` and throws tmill::error(engine_fault) when the launch fails.
// Reductions run in a fixed order that depends only on the row's own data (batch invariance); they differ
// from the CPU's order, so results agree with the reference to float rounding, not bitwise (docs/cuda.md).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "kernels/kernels.h"

namespace tmill::cuda {

// y (n_rows, n) = x / sqrt(mean(x^2) + eps) * w, row by row; y may alias x. w: (n).
void rmsnorm(const float * x, const float * w, float * y, int64_t n_rows, int64_t n, float eps, cudaStream_t stream);

// x: (n_rows, n_head, head_dim) rotated in place by the positions pos (n_rows), as kernels::rope: the
// first n_rot dims of each head rotate, theta_i = pos * freq_scale * freq_base^(-2i/n_rot) by ggml's
// recurrence (the same float multiplications in the same order as the reference).
// pre: n_rot even, <= head_dim, <= kernels::k_rope_max_rot (checked).
void rope(float * x, int64_t n_rows, int64_t n_head, int64_t head_dim, int64_t n_rot, const int32_t * pos,
          float freq_base, float freq_scale, kernels::rope_style style, cudaStream_t stream);

// y (n) = silu(a) * b; y may alias a or b.
void silu_mul(const float * a, const float * b, float * y, int64_t n, cudaStream_t stream);

// Activation rows x (n_rows, n) F32 -> y (n_rows, n / 32) block_q8_0 as quant::quantize_row_q8_0 (d = amax / 127
// as F16, q = x * (127 / amax) rounded to nearest even). pre: n a multiple of 32 (checked).
void quantize_q8_0(const float * x, void * y, int64_t n_rows, int64_t n, cudaStream_t stream);

// Matrix-vector products for decode, y[t * ldy + r] = dot(W row r, activation row t) for r < n_out, t < n_tok,
// one warp per (row, token). w: (n_out, w_row_bytes); x: (n_tok, x_row_bytes).
// Q8_0 and Q4_0 weights take Q8_0 activations (quantize_q8_0): an exact integer dot per 32-block, scaled
// by d_w * d_x. F16 weights take F32 activations rounded to F16 on load (the CPU converts them to F16).
// pre: n_in a multiple of 32 (checked).
void gemv_q8_0(const void * w, size_t w_row_bytes, const void * x, size_t x_row_bytes, int64_t n_tok, int64_t n_in,
               int64_t n_out, float * y, int64_t ldy, cudaStream_t stream);
void gemv_q4_0(const void * w, size_t w_row_bytes, const void * x, size_t x_row_bytes, int64_t n_tok, int64_t n_in,
               int64_t n_out, float * y, int64_t ldy, cudaStream_t stream);
void gemv_f16(const void * w, size_t w_row_bytes, const float * x, int64_t n_tok, int64_t n_in, int64_t n_out,
              float * y, int64_t ldy, cudaStream_t stream);

// Paged causal attention for decode over an F16 KV cache laid out as kv_storage's
// (n_blocks, block_size, n_head_kv, head_dim) per layer. Token t attends to positions 0..n_ctx[t]-1 of its
// sequence, whose physical blocks are block_tables[t * max_blocks .. + ceil(n_ctx[t] / block_size)).
// Query head h reads KV head h / (n_head / n_head_kv). The query is rounded to F16 as the CPU kernel does;
// scores, softmax and the value sum run in F32 (the CPU rounds its value accumulator to F16 after each
// key, so the two agree to F16 rounding). No soft-capping (the CPU kernel's softcap 0) and no sliding window.
// q: (n_tok, n_head, head_dim) F32; out: (n_tok, n_head, head_dim) F32.
// pre: head_dim <= k_attend_max_head_dim, n_head a multiple of n_head_kv (checked); n_ctx[t] >= 1.
constexpr int64_t k_attend_max_head_dim = 256;
void attend_f16_paged(const float * q, int64_t n_tok, int64_t n_head, int64_t n_head_kv, int64_t head_dim, float scale,
                      const int32_t * n_ctx, const int32_t * block_tables, int32_t max_blocks, int32_t block_size,
                      const uint16_t * k_layer, const uint16_t * v_layer, float * out, cudaStream_t stream);

} // namespace tmill::cuda
