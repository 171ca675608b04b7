// IQ4_NL: blocks of 32 weights, an F16 scale and 16 bytes of nibbles (ggml block_iq4_nl, 18 bytes); a
// nibble indexes a fixed non-linear table of 16 int8 levels: x = d * k_iq4nl_values[n]. Nibble layout as
// Q4_0 (element j < 16: low nibble of qs[j]; j + 16: high nibble).
#pragma once

#include <cstdint>

namespace tmill::quant {

constexpr int qk4_nl = 32;

// ggml's kvalues_iq4nl (shared by IQ4_XS).
constexpr int8_t k_iq4nl_values[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

struct block_iq4_nl {
    uint16_t d;                 // F16 scale
    uint8_t qs[qk4_nl / 2];     // (16) table indices
};
static_assert(sizeof(block_iq4_nl) == 18, "block_iq4_nl must match ggml's 18-byte layout");

// n must be a multiple of 32 (checked).
void dequantize_row_iq4_nl(const void * src, float * dst, int64_t n);

} // namespace tmill::quant
