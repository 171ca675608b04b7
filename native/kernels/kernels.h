// The kernel function table: one entry per operation, filled once from the CPU's features
// (ref -> avx2 -> avx512; an ISA without a variant keeps the next lower one).
//
// ODR rule: this header is included by ISA-specific translation units, so it holds only plain data,
// enums and function-pointer types — no inline functions, no default member initializers (they
// would make an inline constructor that an AVX-512 object file could supply to baseline callers).
#pragma once

#include <cstddef>
#include <cstdint>

namespace tmill::kernels {

enum class rope_style : int {
    normal = 0,     // rotate pairs (2i, 2i+1) (llama)
    neox = 1,       // rotate pairs (i, i + n_rot/2) (GPT-NeoX, Qwen, ...)
};

// y[t * ldy + r] = dot(W row r, activation row t) for r in [r0, r1), t in [0, n_tok).
// w: (n_out, w_row_bytes) weight rows; x: (n_tok, x_row_bytes) activation rows already converted to
// quant::activation_type(weight type). Each output is computed the same way whatever r0, r1 and
// n_tok are (batch invariance). n_in must be a multiple of the weight block size.
using matmul_rows_fn = void (*)(const void * w, size_t w_row_bytes, const void * x, size_t x_row_bytes,
                                int64_t n_tok, int64_t n_in, int64_t r0, int64_t r1, float * y, int64_t ldy);

struct kernel_table {
    const char * isa;   // "baseline", "avx2" or "avx512": the best level this table was built for

    matmul_rows_fn matmul_f32;
    matmul_rows_fn matmul_f16;
    matmul_rows_fn matmul_bf16;
    matmul_rows_fn matmul_q8_0;
    matmul_rows_fn matmul_q4_0;
    matmul_rows_fn matmul_q4_k;
    matmul_rows_fn matmul_q5_k;
    matmul_rows_fn matmul_q6_k;

    // Activation rows for Q8_0/Q4_0 weights: x (n) F32 -> y (n / 32) block_q8_0, bitwise what
    // quant::quantize_row_q8_0 writes (d = amax / 127 as F16, q = x * (127 / amax) rounded to nearest
    // even). pre: n a multiple of 32; x finite, each block's amax zero or >= 1e-36 (127 / amax finite).
    void (*quantize_q8_0)(const float * x, void * y, int64_t n);

    // y (n) = x / sqrt(mean(x^2) + eps) * w; y may alias x.
    void (*rmsnorm)(const float * x, const float * w, float * y, int64_t n, float eps);
    // x (n) = softmax(x) in place; n >= 1.
    void (*softmax)(float * x, int64_t n);
    // y (n) = silu(a) * b; y may alias a or b.
    void (*silu_mul)(const float * a, const float * b, float * y, int64_t n);
    // y (n) = a + b; y may alias a or b.
    void (*add)(const float * a, const float * b, float * y, int64_t n);
    // x: (n_rows, n_head, head_dim) rotated in place; pos: (n_rows) position of each row. The first
    // n_rot dims of each head rotate (n_rot even, <= head_dim, <= k_rope_max_rot); the rest pass through.
    // theta_i = pos * freq_scale * freq_base^(-2i/n_rot).
    void (*rope)(float * x, int64_t n_rows, int64_t n_head, int64_t head_dim, int64_t n_rot,
                 const int32_t * pos, float freq_base, float freq_scale, rope_style style);
    // Attention helpers: dot of two F32 vectors (n), and y (n) += a * x.
    float (*dot_f32)(const float * a, const float * b, int64_t n);
    void (*axpy_f32)(float a, const float * x, float * y, int64_t n);
    // Attention over an F16 KV cache: dot of F32 a with F16 b (n), and y (n) += a * F16 x.
    float (*dot_f32_f16)(const float * a, const uint16_t * b, int64_t n);
    void (*axpy_f16)(float a, const uint16_t * x, float * y, int64_t n);
    // Causal attention of one (token, head) over a paged F16 KV cache, with llama.cpp's CPU flash-attention
    // numerics: query rounded to F16; score_j = dot(q16, k_j) * scale in F32; online softmax whose value
    // accumulator is rounded to F16 after every update; out = acc · (1/S). Keys are visited in order 0..n_ctx-1,
    // so the result depends only on this (token, head)'s data (batch invariance).
    // q: (head_dim) F32; out: (head_dim); scratch: (2, head_dim) floats, not aliasing q or out.
    // Key/value j: k_base/v_base + block_table[j / block_size] * block_stride + (j % block_size) * slot_stride,
    // each (head_dim) F16 (strides in elements; the bases already point at the layer and KV head).
    // pre: head_dim >= 1, n_ctx >= 1, block_size >= 1, block_table covers positions 0..n_ctx-1.
    void (*attend_f16)(const float * q, int64_t head_dim, float scale, int32_t n_ctx, const int32_t * block_table,
                       int32_t block_size, const uint16_t * k_base, const uint16_t * v_base, size_t block_stride,
                       size_t slot_stride, float * out, float * scratch);
    // attend_f16 for n_heads query heads that share one KV head (grouped-query attention): head g's output
    // is bit for bit what attend_f16 gives for q + g * head_dim, whatever n_heads is (batch invariance); the
    // heads only share the loads and F16 conversions of each key and value row.
    // q: (n_heads, head_dim) F32; out: (n_heads, head_dim); scratch: attend_f16_heads_scratch(n_heads,
    // head_dim) floats, not aliasing q or out; the other arguments as attend_f16's.
    // pre: n_heads >= 1 and attend_f16's.
    void (*attend_f16_heads)(const float * q, int64_t n_heads, int64_t head_dim, float scale, int32_t n_ctx,
                             const int32_t * block_table, int32_t block_size, const uint16_t * k_base,
                             const uint16_t * v_base, size_t block_stride, size_t slot_stride, float * out,
                             float * scratch);
};

// The most dims rope rotates per head (its angle caches live on the stack).
constexpr int64_t k_rope_max_rot = 1024;

// Keys whose scores the SIMD attention kernels compute before their serial online softmax walks them.
constexpr int32_t k_attend_key_chunk = 16;

// Floats of scratch attend_f16_heads needs (any level): per head an accumulator, the F16 query, a chunk of
// scores, the running max and sum; plus one converted key/value row.
size_t attend_f16_heads_scratch(int64_t n_heads, int64_t head_dim);

enum class isa_level : int { baseline = 0, avx2 = 1, avx512 = 2 };

// The table for this machine (cpu_features_get(), so TOKENMILL_ISA caps it); built on first call.
const kernel_table & kernels_get();
// The table for an explicit level (tests); the caller must know the CPU supports `level`.
kernel_table kernels_for(isa_level level);

namespace ref {
void fill(kernel_table & t);        // every entry
}
namespace avx2 {
void fill(kernel_table & t);        // overrides the entries it has
}
namespace avx512 {
void fill(kernel_table & t);        // overrides the entries it has
}

} // namespace tmill::kernels
