// IQ4_XS: super-blocks of 256 weights in 8 sub-blocks of 32 (ggml block_iq4_xs, 136 bytes), IQ4_NL's
// table with a 6-bit scale per sub-block: x = d * (ls[j] - 32) * k_iq4nl_values[n]. ls[j] = nibble j % 2
// of scales_l[j / 2] | bits 2j..2j+1 of scales_h << 4. Sub-block j's nibbles are qs[16j .. 16j+15], laid
// out as IQ4_NL's block.
#pragma once

#include "quant/iq4-nl.h"
#include "quant/k-common.h"

#include <cstdint>

namespace tmill::quant {

struct block_iq4_xs {
    uint16_t d;                 // F16 super-block scale
    uint16_t scales_h;          // high 2 bits of the 8 sub-block scales
    uint8_t scales_l[qk_k / 64];// (4) low 4 bits of the scales, two per byte
    uint8_t qs[qk_k / 2];       // (128) table indices
};
static_assert(sizeof(block_iq4_xs) == 136, "block_iq4_xs must match ggml's 136-byte layout");

// The 6-bit scale (0..63, used as value - 32) of sub-block j (0..7).
inline int iq4xs_scale(const block_iq4_xs & b, int j) {
    return ((b.scales_l[j / 2] >> (4 * (j % 2))) & 0x0f) | (((b.scales_h >> (2 * j)) & 3) << 4);
}

// n must be a multiple of 256 (checked).
void dequantize_row_iq4_xs(const void * src, float * dst, int64_t n);

} // namespace tmill::quant
