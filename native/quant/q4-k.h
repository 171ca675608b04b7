// Q4_K: super-blocks of 256 weights in 8 sub-blocks of 32 (ggml block_q4_K, 144 bytes).
// x = d * sc[j] * q - dmin * m[j], q a 4-bit value. In each 64-element chunk c (0..3), qs[32c + l]
// holds element 64c + l in its low nibble and element 64c + 32 + l in its high nibble.
#pragma once

#include "quant/k-common.h"

#include <cstdint>

namespace tmill::quant {

struct block_q4_k {
    uint16_t d;                     // F16 super-block scale for the sub-block scales
    uint16_t dmin;                  // F16 super-block scale for the sub-block mins
    uint8_t scales[k_scale_size];   // (12) 8 scales + 8 mins, 6 bits each (see unpack_k4_scales)
    uint8_t qs[qk_k / 2];           // (128) nibbles
};
static_assert(sizeof(block_q4_k) == 144, "block_q4_k must match ggml's 144-byte layout");

// n must be a multiple of 256 (checked).
void dequantize_row_q4_k(const void * src, float * dst, int64_t n);

} // namespace tmill::quant
