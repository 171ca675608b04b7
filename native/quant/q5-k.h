// Q5_K: super-blocks of 256 weights in 8 sub-blocks of 32 (ggml block_q5_K, 176 bytes).
// As Q4_K plus a fifth bit: element 64c + l takes bit 2c of qh[l], element 64c + 32 + l bit 2c + 1.
#pragma once

#include "quant/k-common.h"

#include <cstdint>

namespace tmill::quant {

struct block_q5_k {
    uint16_t d;                     // F16 super-block scale for the sub-block scales
    uint16_t dmin;                  // F16 super-block scale for the sub-block mins
    uint8_t scales[k_scale_size];   // (12) as Q4_K
    uint8_t qh[qk_k / 8];           // (32) high bits
    uint8_t qs[qk_k / 2];           // (128) low nibbles, laid out as Q4_K
};
static_assert(sizeof(block_q5_k) == 176, "block_q5_k must match ggml's 176-byte layout");

// n must be a multiple of 256 (checked).
void dequantize_row_q5_k(const void * src, float * dst, int64_t n);

} // namespace tmill::quant
