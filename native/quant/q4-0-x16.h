// Q4_0 and IQ4_NL rows (the same 18-byte block: an F16 scale and 16 bytes of nibbles, element j < 16 the low nibble
// of qs[j], element j + 16 the high one) repacked 16 at a time for the AVX-512 and avx2 levels (docs/kernels.md, "Q4_1, Q4_0,
// IQ4_NL and Q5_0 repacked at load"): one block_q4_0_x16 holds blocks 2h and 2h + 1 of 16 consecutive rows, each
// block's nibbles interleaved so that one 64-byte load carries the same 4 bytes of qs of every row, a row per
// int32 lane (as quant/q4-1-x16.h, NOTE(nibble-x16)), after the 32 F16 scales of both. Two blocks make 576 bytes, 9
// cache lines, so every block's nibbles start on a line in an aligned copy (one block's 288 bytes would put every
// other block across lines), and the scales come first so that the kernel, which reads them first, reads the
// lines in order: with the scales last (lines 0-3, 8, 4-7 of each pair) the hardware prefetcher did not follow
// the stream (NOTE(nibble-x16)). A repacked row is exactly as long as a GGUF row, and the rows' width must be a
// multiple of 64. The values are the rows' own: q4_0_x16_row_block gives the original blocks back bit for bit.
#pragma once

#include "quant/q4-0.h"
#include "quant/x16.h"

#include <cstddef>
#include <cstdint>

namespace tmill::quant {

constexpr int k_q4_0_x16_blocks = 2;          // 32-blocks per block_q4_0_x16
constexpr int k_q4_0_x16_quads = qk4_0 / 8;   // quads of qs bytes per block (each two quads of elements)

struct block_q4_0_x16 {
    uint16_t d[k_q4_0_x16_blocks][k_x16_rows];                         // F16 scale of row r's block h
    uint8_t qs[k_q4_0_x16_blocks][k_q4_0_x16_quads][k_x16_rows][4];   // [h][k][r]: bytes 4k .. 4k + 3 of row r's block h
};
static_assert(sizeof(block_q4_0_x16) == 2 * 16 * sizeof(block_q4_0), "16 rows of two Q4_0 blocks, 9 cache lines");

// Whether rows of n_in weights can take the layout (a whole number of block pairs).
constexpr bool q4_0_x16_fits(int64_t n_in) { return n_in % (k_q4_0_x16_blocks * qk4_0) == 0; }

// The layout as every kernel of it reads it (their layout descriptions derive from this): where block b of the group
// whose first block pair is g keeps line k of its qs (bytes 4k .. 4k + 3 of the 16 rows) and its 16 F16 scales.
struct q4_0_x16_access {
    using group = block_q4_0_x16;
    static const uint8_t * line(const group * g, int64_t b, int k) { return g[b / 2].qs[b % 2][k][0]; }
    static const uint16_t * d(const group * g, int64_t b) { return g[b / 2].d[b % 2]; }
};

// Row r's block b (of the group whose first block pair is g): a Q4_0 block, or an IQ4_NL one, which has its layout.
block_q4_0 q4_0_x16_row_block(const block_q4_0_x16 * g, int64_t b, int r);

// 16 rows of nb blocks each (row r at src + r * src_row_bytes; nb even) to nb / 2 repacked blocks at dst.
void q4_0_x16_pack(const uint8_t * src, size_t src_row_bytes, int64_t nb, block_q4_0_x16 * dst);

} // namespace tmill::quant
