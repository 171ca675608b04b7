// Q2_K: super-blocks of 256 weights in 16 sub-blocks of 16 (ggml block_q2_K, 84 bytes).
// x = d * (scales[s] & 15) * q - dmin * (scales[s] >> 4), q a 2-bit value. In each 128-element half h
// (0..1), with qs = qs + 32h, element 128h + 32k + l (k 0..3, l 0..31) is bits 2k..2k+1 of qs[l];
// sub-block s covers elements 16s .. 16s+15.
#pragma once

#include "quant/k-common.h"

#include <cstdint>

namespace tmill::quant {

struct block_q2_k {
    uint8_t scales[qk_k / 16];  // (16) low nibble: scale, high nibble: min, per sub-block
    uint8_t qs[qk_k / 4];       // (64) 2-bit values
    uint16_t d;                 // F16 super-block scale for the scales
    uint16_t dmin;              // F16 super-block scale for the mins
};
static_assert(sizeof(block_q2_k) == 84, "block_q2_k must match ggml's 84-byte layout");

// The 2-bit value (0..3) of element e (0..255) of a Q2_K block.
inline int q2k_value(const uint8_t * qs, int e) {
    return (qs[32 * (e / 128) + e % 32] >> (2 * ((e % 128) / 32))) & 3;
}

// n must be a multiple of 256 (checked).
void dequantize_row_q2_k(const void * src, float * dst, int64_t n);

} // namespace tmill::quant
