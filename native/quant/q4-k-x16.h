// Q4_K rows repacked 16 at a time for the decode GEMV (docs/kernels.md, "Q4_K repacked at load"): one
// block_q4_k_x16 holds super-block b of 16 consecutive rows, their headers unpacked and their weights
// interleaved so that one 64-byte load carries the same 4 bytes of qs of every row (a row per int32 lane).
// The values are the rows' own: q4_k_x16_unpack gives the original blocks back bit for bit.
#pragma once

#include "quant/q4-k.h"
#include "quant/x16.h"

#include <cstddef>
#include <cstdint>

namespace tmill::quant {

struct block_q4_k_x16 {
    uint16_t d[k_x16_rows];      // F16 scales of the 16 rows
    uint16_t dmin[k_x16_rows];   // F16 min scales
    uint8_t sc[8][k_x16_rows];   // sub-block j's 6-bit scale of row r at sc[j][r] (unpack_k4_scales)
    uint8_t m[8][k_x16_rows];    // its 6-bit min
    uint8_t qs[32][k_x16_rows][4];   // quad 8c + k: bytes 4k .. 4k+3 of the row's qs chunk c (of 4)
};
static_assert(sizeof(block_q4_k_x16) == 2368, "16 rows of a Q4_K super-block, headers unpacked");

// The bytes of one repacked row of n_in weights (a 16-row group is 16 times this): 148 per super-block.
constexpr size_t q4_k_x16_row_bytes(int64_t n_in) { return size_t(n_in / qk_k) * sizeof(block_q4_k_x16) / k_x16_rows; }

// Row r's original block (its 12-byte scales packed again).
block_q4_k q4_k_x16_row(const block_q4_k_x16 & g, int r);

// 16 rows of nb super-blocks each (row r at src + r * src_row_bytes) to nb repacked blocks at dst.
void q4_k_x16_pack(const uint8_t * src, size_t src_row_bytes, int64_t nb, block_q4_k_x16 * dst);
// The inverse: nb repacked blocks to 16 rows of block_q4_k (row r at dst + r * dst_row_bytes).
void q4_k_x16_unpack(const block_q4_k_x16 * src, int64_t nb, uint8_t * dst, size_t dst_row_bytes);

} // namespace tmill::quant
