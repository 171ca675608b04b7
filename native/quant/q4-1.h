// Q4_1: blocks of 32 weights, an F16 scale and an F16 minimum, 16 bytes of nibbles (ggml block_q4_1,
// 20 bytes). Element j < 16 is the low nibble of qs[j], element j + 16 the high nibble; x = d * n + m.
#pragma once

#include <cstdint>

namespace tmill::quant {

constexpr int qk4_1 = 32;

struct block_q4_1 {
    uint16_t d;                 // F16 scale
    uint16_t m;                 // F16 minimum (added to every element)
    uint8_t qs[qk4_1 / 2];      // (16) low nibbles: elements 0..15, high nibbles: 16..31
};
static_assert(sizeof(block_q4_1) == 20, "block_q4_1 must match ggml's 20-byte layout");

// n must be a multiple of 32 (checked).
void dequantize_row_q4_1(const void * src, float * dst, int64_t n);

} // namespace tmill::quant
