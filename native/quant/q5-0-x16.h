// Q5_0 rows repacked 16 at a time for the AVX-512 and avx2 levels (docs/kernels.md, "Q4_1, Q4_0, IQ4_NL and Q5_0 repacked at
// load"), as quant/q4-0-x16.h repacks Q4_0 (NOTE(nibble-x16)): one block_q5_0_x16 holds blocks 2h and 2h + 1 of 16
// consecutive rows — the 32 F16 scales first, then for each block the 16 rows' 32-bit qh (the elements' fifth bits,
// a row per int32 lane) and their nibbles interleaved so that one 64-byte load carries the same 4 bytes of qs of
// every row. Two blocks make 704 bytes, 11 cache lines, in the order the kernel first reads them; a repacked row is
// exactly as long as a GGUF row (22 bytes a block), and the rows' width must be a multiple of 64. The values are the
// rows' own: q5_0_x16_row_block gives the original blocks back bit for bit.
#pragma once

#include "quant/q5-0.h"
#include "quant/x16.h"

#include <cstddef>
#include <cstdint>

namespace tmill::quant {

constexpr int k_q5_0_x16_blocks = 2;          // 32-blocks per block_q5_0_x16
constexpr int k_q5_0_x16_quads = qk5_0 / 8;   // quads of qs bytes per block (each two quads of elements)

struct block_q5_0_x16 {
    uint16_t d[k_q5_0_x16_blocks][k_x16_rows];   // F16 scale of row r's block h
    struct {
        uint8_t qh[k_x16_rows][4];                       // row r's qh
        uint8_t qs[k_q5_0_x16_quads][k_x16_rows][4];     // [k][r]: bytes 4k .. 4k + 3 of row r's qs
    } blk[k_q5_0_x16_blocks];
};
static_assert(sizeof(block_q5_0_x16) == 2 * 16 * sizeof(block_q5_0), "16 rows of two Q5_0 blocks, 11 cache lines");

// Whether rows of n_in weights can take the layout (a whole number of block pairs).
constexpr bool q5_0_x16_fits(int64_t n_in) { return n_in % (k_q5_0_x16_blocks * qk5_0) == 0; }

// The layout as every kernel of it reads it (their layout descriptions derive from this): where block b of the group
// whose first block pair is g keeps line k of its qs (bytes 4k .. 4k + 3 of the 16 rows), its 16 F16 scales and its
// 16 rows' 32-bit words of fifth bits.
struct q5_0_x16_access {
    using group = block_q5_0_x16;
    static const uint8_t * line(const group * g, int64_t b, int k) { return g[b / 2].blk[b % 2].qs[k][0]; }
    static const uint16_t * d(const group * g, int64_t b) { return g[b / 2].d[b % 2]; }
    static const uint8_t * qh(const group * g, int64_t b) { return g[b / 2].blk[b % 2].qh[0]; }
};

// Row r's block b (of the group whose first block pair is g).
block_q5_0 q5_0_x16_row_block(const block_q5_0_x16 * g, int64_t b, int r);

// 16 rows of nb blocks each (row r at src + r * src_row_bytes; nb even) to nb / 2 repacked blocks at dst.
void q5_0_x16_pack(const uint8_t * src, size_t src_row_bytes, int64_t nb, block_q5_0_x16 * dst);

} // namespace tmill::quant
