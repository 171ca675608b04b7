// Q8_1: the activation format paired with Q4_1 and Q5_1 weights (ggml block_q8_1, 36 bytes): Q8_0 plus
// s = d * sum(qs) as F16, which applies the weights' per-block minimum in one multiply.
#pragma once

#include <cstdint>

namespace tmill::quant {

constexpr int qk8_1 = 32;

struct block_q8_1 {
    uint16_t d;             // F16 scale
    uint16_t s;             // F16 d * sum(qs), d the F32 scale before rounding
    int8_t qs[qk8_1];       // (32) x = d * qs
};
static_assert(sizeof(block_q8_1) == 36, "block_q8_1 must match ggml's 36-byte layout");

// n must be a multiple of 32 (checked). As quantize_row_q8_0 (d = amax/127, q = x * (127/amax) rounded to
// nearest even: ggml's x86 formula), then s = F16(d * sum(q)) with the F32 d, as ggml's x86 code.
void quantize_row_q8_1(const float * src, void * dst, int64_t n);
void dequantize_row_q8_1(const void * src, float * dst, int64_t n);

} // namespace tmill::quant
