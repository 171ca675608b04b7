// Q8_K: the activation format paired with K-quant weights (ggml block_q8_K, 292 bytes): 256 signed
// bytes, an F32 scale and the sums of each group of 16 (used to apply the weights' mins/offsets).
#pragma once

#include "quant/k-common.h"

#include <cstdint>

namespace tmill::quant {

struct block_q8_k {
    float d;                    // F32 scale (may be negative)
    int8_t qs[qk_k];            // (256) x = d * qs
    int16_t bsums[qk_k / 16];   // (16) sum of qs[16g .. 16g+15]
};
static_assert(sizeof(block_q8_k) == 292, "block_q8_k must match ggml's 292-byte layout");

// n must be a multiple of 256 (checked). As ggml's reference: the element of largest magnitude maps
// to -127 exactly (scale = max / -127), other values round to nearest even.
void quantize_row_q8_k(const float * src, void * dst, int64_t n);
void dequantize_row_q8_k(const void * src, float * dst, int64_t n);

} // namespace tmill::quant
