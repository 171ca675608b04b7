// Q3_K: super-blocks of 256 weights in 16 sub-blocks of 16 (ggml block_q3_K, 110 bytes).
// x = d * (sc[s] - 32) * (q - 4), q a 3-bit value: its low 2 bits are laid out as Q2_K's (q2k_value),
// its high bit is bit e / 32 of hmask[e % 32] for element e. The 16 6-bit scales sc are packed in 12
// bytes (unpack_q3k_scales).
#pragma once

#include "quant/k-common.h"

#include <cstdint>

namespace tmill::quant {

struct block_q3_k {
    uint8_t hmask[qk_k / 8];    // (32) high bits
    uint8_t qs[qk_k / 4];       // (64) low 2 bits
    uint8_t scales[12];         // 16 6-bit scales
    uint16_t d;                 // F16 super-block scale
};
static_assert(sizeof(block_q3_k) == 110, "block_q3_k must match ggml's 110-byte layout");

// Unpacks the 12 scale bytes into 16 signed scales (the 6-bit value minus 32). Scale s: low 4 bits from
// byte s (s < 8, low nibble) or byte s - 8 (high nibble); high 2 bits are bits 2(s/4)..2(s/4)+1 of byte
// 8 + s % 4.
void unpack_q3k_scales(const uint8_t * scales, int8_t * sc);   // scales: (12); sc: (16)

// The signed 3-bit value (-4..3) of element e (0..255) of a Q3_K block.
inline int q3k_value(const block_q3_k & b, int e) {
    const int low = (b.qs[32 * (e / 128) + e % 32] >> (2 * ((e % 128) / 32))) & 3;
    return low - (((b.hmask[e % 32] >> (e / 32)) & 1) ? 0 : 4);
}

// n must be a multiple of 256 (checked).
void dequantize_row_q3_k(const void * src, float * dst, int64_t n);

} // namespace tmill::quant
