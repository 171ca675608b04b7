// Shared geometry of the K-quant super-blocks (ggml: QK_K = 256, K_SCALE_SIZE = 12).
#pragma once

#include <cstdint>

namespace tmill::quant {

constexpr int qk_k = 256;
constexpr int k_scale_size = 12;

// Unpacks the 12-byte scale/min field of Q4_K and Q5_K into eight 6-bit scales and eight 6-bit mins
// (sub-block j covers elements 32j .. 32j+31). Bytes 0..3: low 6 bits of sc[0..3], top 2 bits feed
// sc[4..7]; bytes 4..7 the same for m; bytes 8..11: low nibble sc[4..7], high nibble m[4..7].
void unpack_k4_scales(const uint8_t * scales, uint8_t * sc, uint8_t * m);   // scales: (12); sc, m: (8)
// Its inverse (every bit of the 12 bytes carries one of the 96 bits of sc and m, 6 bits each).
void pack_k4_scales(const uint8_t * sc, const uint8_t * m, uint8_t * scales);

} // namespace tmill::quant
