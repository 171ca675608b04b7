// Q4_0: blocks of 32 weights, one F16 scale and 16 bytes of nibbles (ggml block_q4_0, 18 bytes).
// Element j < 16 is the low nibble of qs[j], element j + 16 the high nibble; x = d * (nibble - 8).
#pragma once

#include <cstdint>

namespace tmill::quant {

constexpr int qk4_0 = 32;

struct block_q4_0 {
    uint16_t d;                 // F16 scale
    uint8_t qs[qk4_0 / 2];      // (16) low nibbles: elements 0..15, high nibbles: 16..31
};
static_assert(sizeof(block_q4_0) == 18, "block_q4_0 must match ggml's 18-byte layout");

// n must be a multiple of 32 (checked).
void dequantize_row_q4_0(const void * src, float * dst, int64_t n);
// Reference quantizer as ggml's: the element of largest magnitude maps to -8 (d = max / -8).
void quantize_row_q4_0(const float * src, void * dst, int64_t n);

} // namespace tmill::quant
