// Q5_1: as Q5_0 plus an F16 minimum (ggml block_q5_1, 24 bytes): x = d * q + m, q the unsigned 5-bit
// value (q5_value in quant/q5-0.h).
#pragma once

#include <cstdint>

namespace tmill::quant {

constexpr int qk5_1 = 32;

struct block_q5_1 {
    uint16_t d;                 // F16 scale
    uint16_t m;                 // F16 minimum
    uint8_t qh[4];              // fifth bits, as Q5_0
    uint8_t qs[qk5_1 / 2];      // (16) low 4 bits, as Q5_0
};
static_assert(sizeof(block_q5_1) == 24, "block_q5_1 must match ggml's 24-byte layout");

// n must be a multiple of 32 (checked).
void dequantize_row_q5_1(const void * src, float * dst, int64_t n);

} // namespace tmill::quant
