// The kernel function table: one entry per operation, filled once from the CPU's features
// (ref -> avx2 -> avx512 -> avx512+amx; an ISA without a variant keeps the next lower one).
//
// ODR rule: this header is included by ISA-specific translation units, so it holds only plain data,
// enums and function-pointer types — no inline functions, no default member initializers (they
// would make an inline constructor that an AVX-512 object file could supply to baseline callers).
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/cpu-vendor.h"

namespace tmill::kernels {

enum class rope_style : int {
    normal = 0,     // rotate pairs (2i, 2i+1) (llama)
    neox = 1,       // rotate pairs (i, i + n_rot/2) (GPT-NeoX, Qwen, ...)
};

// The kernel entries' function types, each with its contract. A level defines a function of that type
// and name for every entry of kernels/entries.h (its table fill and declarations are generated from there).

// y[t * ldy + r] = dot(W row r, activation row t) for r in [r0, r1), t in [0, n_tok).
// w: (n_out, w_row_bytes) weight rows; x: (n_tok, x_row_bytes) activation rows already converted to
// quant::activation_type(weight type). Each output is computed the same way whatever r0, r1 and
// n_tok are (batch invariance). n_in must be a multiple of the weight block size.
using matmul_rows_kernel = void(const void * w, size_t w_row_bytes, const void * x, size_t x_row_bytes,
                                int64_t n_tok, int64_t n_in, int64_t r0, int64_t r1, float * y, int64_t ldy);
using matmul_rows_fn = matmul_rows_kernel *;

// Defines the matmul_rows_kernel entry `name` of a level as a call of `impl` (a template instance written
// once per family), so each weight type's entry is one line instead of a restated signature.
#define TM_MATMUL_ROWS_ENTRY(name, ...)                                                                         \
    void name(const void * w, size_t wb, const void * x, size_t xb, int64_t n_tok, int64_t n_in, int64_t r0,   \
              int64_t r1, float * y, int64_t ldy) {                                                             \
        __VA_ARGS__(w, wb, x, xb, n_tok, n_in, r0, r1, y, ldy);                                                 \
    }

// Activation rows: x (n) F32 -> y in the entry's format, bitwise what its quant:: reference writes.
// quantize_q8_0 (Q8_0/Q4_0/Q5_0/IQ4_NL weights): (n / 32) block_q8_0 as quant::quantize_row_q8_0 (d = amax / 127
// as F16, q = x * (127 / amax) rounded to nearest even); quantize_q8_1 (Q4_1/Q5_1): (n / 32) block_q8_1 as
// quant::quantize_row_q8_1 (Q8_0 plus s = F16(d * sum q)); quantize_q8_k (K-quants, IQ4_XS): (n / 256)
// block_q8_k as quant::quantize_row_q8_k. pre: n a multiple of the block (32, or 256 for Q8_K); x finite,
// each block's amax zero or >= 1e-36 (127 / amax finite).
// quantize_f16: (n) F16 as quant::quantize_row_f16 (round to nearest even, NaN as the canonical quiet NaN).
using quantize_kernel = void(const float * x, void * y, int64_t n);

// y (n) = x / sqrt(mean(x^2) + eps) * w; y may alias x.
using rmsnorm_kernel = void(const float * x, const float * w, float * y, int64_t n, float eps);

// y (n) = silu(a) * b (silu_mul), or a + b (add); y may alias a or b.
using binary_kernel = void(const float * a, const float * b, float * y, int64_t n);

// x: (n_rows, n_head, head_dim) rotated in place; pos: (n_rows) position of each row. The first
// n_rot dims of each head rotate (n_rot even, <= head_dim, <= k_rope_max_rot); the rest pass through.
// theta_i = freq_scale * (pos * freq_base^(-2i/n_rot) / freq_factors[i]): freq_factors (n_rot / 2) are Llama 3's
// per-pair divisors (rope_freqs.weight), nullptr for none (every factor 1), as ggml_rope_ext takes them.
using rope_kernel = void(float * x, int64_t n_rows, int64_t n_head, int64_t head_dim, int64_t n_rot,
                         const int32_t * pos, float freq_base, float freq_scale, const float * freq_factors,
                         rope_style style);

// Causal attention of one (token, head) over a paged F16 KV cache, with llama.cpp's CPU flash-attention
// numerics: query rounded to F16; score_j = dot(q16, k_j) * scale in F32 — or, with softcap c != 0 (gemma2),
// c * tanh(dot * (scale / c)) as ggml soft-caps (the quotient rounded once); online softmax whose value
// accumulator is rounded to F16 after every update; out = acc · (1/S). Keys are visited in order 0..n_ctx-1,
// so the result depends only on this (token, head)'s data (batch invariance).
// q: (head_dim) F32; out: (head_dim); scratch: (2, head_dim) floats, not aliasing q or out.
// Key/value j: k_base/v_base + block_table[j / block_size] * block_stride + (j % block_size) * slot_stride,
// each (head_dim) F16 (strides in elements; the bases already point at the layer and KV head).
// pre: head_dim >= 1, n_ctx >= 1, block_size >= 1, block_table covers positions 0..n_ctx-1.
using attend_kernel = void(const float * q, int64_t head_dim, float scale, float softcap, int32_t n_ctx, const int32_t * block_table,
                           int32_t block_size, const uint16_t * k_base, const uint16_t * v_base, size_t block_stride,
                           size_t slot_stride, float * out, float * scratch);

// attend_f16 for n_heads query heads that share one KV head (grouped-query attention): head g's output
// is bit for bit what attend_f16 gives for q + g * head_dim, whatever n_heads is (batch invariance); the
// heads only share the loads and F16 conversions of each key and value row.
// q: (n_heads, head_dim) F32; out: (n_heads, head_dim); scratch: attend_f16_heads_scratch(n_heads,
// head_dim) floats, not aliasing q or out; the other arguments as attend_f16's.
// pre: n_heads >= 1 and attend_f16's.
using attend_heads_kernel = void(const float * q, int64_t n_heads, int64_t head_dim, float scale, float softcap, int32_t n_ctx,
                                 const int32_t * block_table, int32_t block_size, const uint16_t * k_base,
                                 const uint16_t * v_base, size_t block_stride, size_t slot_stride, float * out,
                                 float * scratch);

} // namespace tmill::kernels

#include "kernels/entries.h"

namespace tmill::kernels {

// One pointer per entry of kernels/entries.h.
struct kernel_table {
    const char * isa;   // "baseline", "avx2", "avx512" or "avx512+amx": the best level this table was built for
    // Whether Q4_K matmul weights are repacked at load for this table (quant/q4-k-x16.h, model/repack.h): set by
    // the levels whose matmul_q4_k_x16 outruns their matmul_q4_k. Every level's matmul_q4_k_x16 computes the
    // layout, with the same bits as matmul_q4_k on the original rows.
    bool q4_k_x16;
    // Whether Q8_0 matmul weights are repacked at load for this table (quant/q8-0-x16.h, model/repack.h): set by
    // the AMX level, whose tiles take that layout as their B operand, and by the avx512 level, whose kernels take 16
    // rows in lanes there (NOTE(nibble-x16)). Outside the entry list, as only those levels have a kernel of their own
    // for it: every table's matmul_q8_0_x16 computes the layout with the block-step numerics (kernels/block-step/
    // step.h), the AMX tiles', the avx512 kernels' or else the scalar reference's.
    bool q8_0_x16;
    matmul_rows_kernel * matmul_q8_0_x16;
    // Whether Q6_K matmul weights are repacked at load for this table (quant/q6-k-x16.h, model/repack.h): set by
    // the avx512 level, whose 16-row kernel gives Q6_K's block step (NOTE(q6-k-block-step)) — the AVX2 level and
    // the baseline keep llama.cpp's order, which a row per lane cannot give, and the AMX level's tiles read the
    // GGUF rows. Outside the entry list for that reason: every table's matmul_q6_k_x16 computes the layout with
    // the block-step numerics, the avx512 kernel's or else the scalar reference's.
    bool q6_k_x16;
    matmul_rows_kernel * matmul_q6_k_x16;
    // Whether Q4_1 (quant/q4-1-x16.h), Q4_0 and IQ4_NL (quant/q4-0-x16.h) and Q5_0 (quant/q5-0-x16.h; the last three
    // in rows of a multiple of 64 weights) matmul weights are repacked at load for this table (model/repack.h): set by
    // the avx512 level, whose kernels for up to 16 tokens take 16 rows in lanes there (NOTE(nibble-x16)), kept by the
    // AMX level, whose tiles take the Q4_1, Q4_0 and IQ4_NL layouts from 16 tokens on (kernels/amx/matmul-q8-0.cpp),
    // and set by the avx2 level, whose kernels take 8 rows a ymm in llama.cpp's order (NOTE(nibble-x16-avx2)). Outside the entry
    // list for that reason. A level that asks for a layout computes it with the bits of its own kernel of the GGUF
    // rows (the block step on the AVX-512 levels, llama.cpp's order on avx2); every other table's entry is the block
    // step's scalar reference.
    bool q4_1_x16;
    matmul_rows_kernel * matmul_q4_1_x16;
    bool q4_0_x16;
    matmul_rows_kernel * matmul_q4_0_x16;
    matmul_rows_kernel * matmul_iq4_nl_x16;
    bool q5_0_x16;
    matmul_rows_kernel * matmul_q5_0_x16;
#define TM_KERNEL_MEMBER(name, type) type * name;
    TM_KERNEL_ENTRIES(TM_KERNEL_MEMBER)
#undef TM_KERNEL_MEMBER
};

// The most dims rope rotates per head (its angle caches live on the stack).
constexpr int64_t k_rope_max_rot = 1024;

// Keys whose scores the SIMD attention kernels compute before their serial online softmax walks them.
constexpr int32_t k_attend_key_chunk = 16;

// Floats of scratch attend_f16_heads needs (any level): per head an accumulator, the F16 query, a chunk of
// scores and one of rescale factors, the running max and sum; plus a chunk of converted key rows, 64-byte
// aligned within the scratch (16 floats of slack).
size_t attend_f16_heads_scratch(int64_t n_heads, int64_t head_dim);

enum class isa_level : int { baseline = 0, avx2 = 1, avx512 = 2, avx512_amx = 3 };

// The table for this machine (cpu_features_get(), so TOKENMILL_ISA caps it); built on first call.
const kernel_table & kernels_get();
// The table for an explicit level (tests) as built for a CPU of `vendor`, which picks between kernels that give the
// same bits and differ only in how they stream memory (avx512's matmul_q4_k_x16 and matmul_q6_k_x16 on AMD:
// NOTE(q4-k-x16-prefetch)), and with or without AVX512-BF16, with which the AVX-512 levels multiply BF16 weights by
// VDPBF16PS in llama.cpp's order for such CPUs (matmul_bf16_dot, NOTE(bf16-dot)) instead of FMAs on converted lanes.
// The caller must know the CPU supports `level` (and AVX512-BF16 where asked); the shorter forms take this machine's
// vendor and extension.
kernel_table kernels_for(isa_level level, cpu_vendor vendor, bool avx512_bf16);
kernel_table kernels_for(isa_level level, cpu_vendor vendor);
kernel_table kernels_for(isa_level level);

// Each level declares every entry (a function named as the entry, of the entry's type) and its fill, which
// sets every entry of t to that level's functions.
namespace ref {
TM_KERNEL_DECLARE_LEVEL
// The BF16 pair-dot numerics of matmul_bf16_dot (NOTE(bf16-dot)), scalar.
matmul_rows_kernel matmul_bf16_dot;
}
namespace avx2 {
TM_KERNEL_DECLARE_LEVEL
matmul_rows_kernel matmul_q4_1_x16;
matmul_rows_kernel matmul_q4_0_x16;
matmul_rows_kernel matmul_iq4_nl_x16;
matmul_rows_kernel matmul_q5_0_x16;
}
namespace avx512 {
TM_KERNEL_DECLARE_LEVEL
matmul_rows_kernel matmul_bf16_dot;   // needs AVX512-BF16
matmul_rows_kernel matmul_q6_k_x16;
matmul_rows_kernel matmul_q6_k_x16_hw_stream;
matmul_rows_kernel matmul_q4_k_x16_hw_stream;
matmul_rows_kernel matmul_q4_1_x16;
matmul_rows_kernel matmul_q4_0_x16;
matmul_rows_kernel matmul_iq4_nl_x16;
matmul_rows_kernel matmul_q5_0_x16;
matmul_rows_kernel matmul_q8_0_x16;
}
// The AVX-512 sources on AVX2 instructions through SIMDe (the C++ tests' build only, tm_kernels_avx512_emulated):
// the emulated AMX level hands small batches to it as the real one hands them to avx512.
namespace avx512_emulated {
TM_KERNEL_DECLARE_LEVEL
matmul_rows_kernel matmul_bf16_dot;
matmul_rows_kernel matmul_q6_k_x16;
matmul_rows_kernel matmul_q6_k_x16_hw_stream;
matmul_rows_kernel matmul_q4_k_x16_hw_stream;
matmul_rows_kernel matmul_q4_1_x16;
matmul_rows_kernel matmul_q4_0_x16;
matmul_rows_kernel matmul_iq4_nl_x16;
matmul_rows_kernel matmul_q5_0_x16;
matmul_rows_kernel matmul_q8_0_x16;
}

} // namespace tmill::kernels
