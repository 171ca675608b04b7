// Q8_0: blocks of 32 weights, one F16 scale and 32 signed bytes (ggml block_q8_0, 34 bytes).
// Also the activation format paired with Q8_0 and Q4_0 weights.
#pragma once

#include <cstdint>

namespace tmill::quant {

constexpr int qk8_0 = 32;

struct block_q8_0 {
    uint16_t d;             // F16 scale
    int8_t qs[qk8_0];       // (32) x = d * qs
};
static_assert(sizeof(block_q8_0) == 34, "block_q8_0 must match ggml's 34-byte layout");

// n must be a multiple of 32 (checked).
void dequantize_row_q8_0(const void * src, float * dst, int64_t n);
// Quantizer, also for activations: d = amax/127 (stored as F16), q = x * (127/amax) rounded to nearest
// even — ggml's x86 SIMD formula, the one llama.cpp runs on AVX CPUs (its scalar reference uses
// x * (1/d) and roundf, which differs by one step in rare near-tie cases).
void quantize_row_q8_0(const float * src, void * dst, int64_t n);
// One block of that quantizer (shared with Q8_1): x (32) -> qs (32); returns the F32 scale amax / 127.
float quantize_block_q8(const float * x, int8_t * qs);

} // namespace tmill::quant
