// Q5_0: blocks of 32 weights, an F16 scale, 32 fifth bits and 16 bytes of nibbles (ggml block_q5_0,
// 22 bytes). Element j < 16: low nibble of qs[j] | bit j of qh << 4; element j + 16: high nibble of
// qs[j] | bit j + 16 of qh << 4 (qh read as a little-endian uint32). x = d * (q - 16).
#pragma once

#include <cstdint>

namespace tmill::quant {

constexpr int qk5_0 = 32;

struct block_q5_0 {
    uint16_t d;                 // F16 scale
    uint8_t qh[4];              // fifth bit of element j at bit j (little-endian uint32)
    uint8_t qs[qk5_0 / 2];      // (16) low 4 bits, laid out as Q4_0
};
static_assert(sizeof(block_q5_0) == 22, "block_q5_0 must match ggml's 22-byte layout");

// The 5-bit value (0..31) of element j (0..31) of a Q5_0/Q5_1 block.
inline int q5_value(const uint8_t * qs, uint32_t qh, int j) {
    const int nib = j < 16 ? (qs[j] & 0x0f) : (qs[j - 16] >> 4);
    return nib | int((qh >> j) & 1u) << 4;
}

// n must be a multiple of 32 (checked).
void dequantize_row_q5_0(const void * src, float * dst, int64_t n);

} // namespace tmill::quant
