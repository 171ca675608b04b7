// Q8_0 rows repacked 16 at a time for the AMX tiles (docs/kernels.md, "The AMX path") and the avx512 level's lanes
// (a row per int32 lane: NOTE(nibble-x16)): one block_q8_0_x16 holds
// two consecutive 32-blocks (2h, 2h + 1) of 16 consecutive rows, each block's 32 weights of the 16 rows in the
// VNNI layout a tile's B operand takes — 8 rows of 64 bytes, row k holding bytes 4k..4k+3 of every row (one
// int32 lane, one tile column, per weight row) — then the 32 F16 scales. Two blocks make 1088 bytes, 17 cache
// lines, so every block's 512 weight bytes start on a cache line in an aligned copy (one block's 544 would put
// every other block across lines, and a misaligned tile load costs three). A repacked row is exactly as long
// as a GGUF row (34 bytes a block); the rows' width must be a multiple of 64. The values are the rows' own:
// q8_0_x16_row_block gives the original blocks back bit for bit.
#pragma once

#include "quant/q8-0.h"
#include "quant/x16.h"

#include <cstddef>
#include <cstdint>

namespace tmill::quant {

constexpr int k_q8_0_x16_blocks = 2;   // 32-blocks per block_q8_0_x16
constexpr int k_q8_0_x16_quads = qk8_0 / 4;

struct block_q8_0_x16 {
    int8_t qs[k_q8_0_x16_blocks][k_q8_0_x16_quads][k_x16_rows][4];   // [h][k][r]: bytes 4k..4k+3 of row r's block h
    uint16_t d[k_q8_0_x16_blocks][k_x16_rows];                        // F16 scale of row r's block h
};
static_assert(sizeof(block_q8_0_x16) == 1088, "16 rows of two Q8_0 blocks, 17 cache lines");

// Whether rows of n_in weights can take the layout (a whole number of block pairs).
constexpr bool q8_0_x16_fits(int64_t n_in) { return n_in % (k_q8_0_x16_blocks * qk8_0) == 0; }

// Row r's block b (of the group whose first block pair is g).
block_q8_0 q8_0_x16_row_block(const block_q8_0_x16 * g, int64_t b, int r);

// 16 rows of nb blocks each (row r at src + r * src_row_bytes; nb even) to nb / 2 repacked blocks at dst.
void q8_0_x16_pack(const uint8_t * src, size_t src_row_bytes, int64_t nb, block_q8_0_x16 * dst);

} // namespace tmill::quant
