// Type-level entry points over the block formats tokenmill computes with: geometry, row sizes,
// dequantize-by-type (embedding lookup, debugging) and the activation format each weight type pairs
// with in matmul.
#pragma once

#include "gguf/ggml-types.h"

#include <cstddef>
#include <cstdint>

namespace tmill::quant {

// True for F32, F16, BF16, the weight formats Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K,
// Q6_K, IQ4_NL, IQ4_XS and the activation formats Q8_1, Q8_K.
bool type_known(ggml_type type);
int64_t type_block_size(ggml_type type);     // elements per block (1 for float types)
size_t type_block_bytes(ggml_type type);     // bytes per block
// Bytes of one row of n elements; n must be a multiple of the block size (checked).
size_t row_bytes(ggml_type type, int64_t n);

// The type the activation row is converted to before a dot product with `weight` rows, as llama.cpp:
// F32 -> F32, F16 -> F16, BF16 -> BF16, Q8_0/Q4_0/Q5_0/IQ4_NL -> Q8_0, Q4_1/Q5_1 -> Q8_1,
// Q2_K/Q3_K/Q4_K/Q5_K/Q6_K/IQ4_XS -> Q8_K (ggml's vec_dot_type).
ggml_type activation_type(ggml_type weight);

// dst (n) = the F32 values of one row of `type` (any known type; checks n and the type).
void dequantize_row(ggml_type type, const void * src, float * dst, int64_t n);
// dst = one row of n F32 values in `type`; only F32, F16, BF16, Q8_0, Q4_0 and the activation formats
// Q8_1 and Q8_K (checked). The other weight formats are written by the GGUF writer (lib/gguf), not here.
void quantize_row(ggml_type type, const float * src, void * dst, int64_t n);

} // namespace tmill::quant
