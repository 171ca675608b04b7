// Q6_K: super-blocks of 256 weights in 16 sub-blocks of 16 (ggml block_q6_K, 210 bytes).
// x = d * scales[s] * (q - 32), q a 6-bit value. In each 128-element half h (0..1), with
// ql = ql + 64h, qh = qh + 32h, for l < 32:
//   element 128h + l      : low nibble  of ql[l]      | bits 0-1 of qh[l] << 4
//   element 128h + 32 + l : low nibble  of ql[l + 32] | bits 2-3 of qh[l] << 4
//   element 128h + 64 + l : high nibble of ql[l]      | bits 4-5 of qh[l] << 4
//   element 128h + 96 + l : high nibble of ql[l + 32] | bits 6-7 of qh[l] << 4
#pragma once

#include "quant/k-common.h"

#include <cstdint>

namespace tmill::quant {

struct block_q6_k {
    uint8_t ql[qk_k / 2];       // (128) low 4 bits
    uint8_t qh[qk_k / 4];       // (64) high 2 bits
    int8_t scales[qk_k / 16];   // (16) signed 8-bit sub-block scales
    uint16_t d;                 // F16 super-block scale
};
static_assert(sizeof(block_q6_k) == 210, "block_q6_k must match ggml's 210-byte layout");

// Element e (0..255) of a super-block as the signed level q - 32 (-32..31), by the layout above.
inline int q6_k_value(const block_q6_k & b, int e) {
    const int h = e / 128, quarter = (e % 128) / 32, l = e % 32;
    const uint8_t low = b.ql[64 * h + 32 * (quarter & 1) + l];
    return ((quarter < 2 ? low & 0x0f : low >> 4) | (((b.qh[32 * h + l] >> (2 * quarter)) & 3) << 4)) - 32;
}

// n must be a multiple of 256 (checked).
void dequantize_row_q6_k(const void * src, float * dst, int64_t n);

} // namespace tmill::quant
