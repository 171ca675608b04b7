// Q4_1 rows repacked 16 at a time for the AVX-512 and avx2 levels (docs/kernels.md, "Q4_1, Q4_0, IQ4_NL and Q5_0 repacked
// at load"): one block_q4_1_x16 holds block b of 16 consecutive rows, their nibbles interleaved so that one 64-byte
// load carries the same 4 bytes of qs of every row, a row per int32 lane — its low nibbles are elements 4k .. 4k + 3
// of the 16 rows, its high nibbles elements 16 + 4k .. 16 + 4k + 3, each one vpdpbusd against the token's quad with
// nothing to reduce (NOTE(nibble-x16)) — then the rows' F16 scales and minimums. 320 bytes, 5 cache lines: a
// repacked row is exactly as long as a GGUF row (20 bytes a block), and every block starts on a line in an aligned
// copy. The values are the rows' own: q4_1_x16_row_block gives the original blocks back bit for bit.
#pragma once

#include "quant/q4-1.h"
#include "quant/x16.h"

#include <cstddef>
#include <cstdint>

namespace tmill::quant {

constexpr int k_q4_1_x16_quads = qk4_1 / 8;   // quads of qs bytes per block (each two quads of elements)

struct block_q4_1_x16 {
    uint8_t qs[k_q4_1_x16_quads][k_x16_rows][4];   // [k][r]: bytes 4k .. 4k + 3 of row r's qs
    uint16_t d[k_x16_rows];                        // F16 scale of row r
    uint16_t m[k_x16_rows];                        // F16 minimum of row r
};
static_assert(sizeof(block_q4_1_x16) == 16 * sizeof(block_q4_1), "16 rows of one Q4_1 block, 5 cache lines");

// The layout as every kernel of it reads it (their layout descriptions derive from this): where block b of the group
// whose first entry is g keeps line k of its qs (bytes 4k .. 4k + 3 of the 16 rows), its 16 F16 scales and its 16 F16
// minimums.
struct q4_1_x16_access {
    using group = block_q4_1_x16;
    static const uint8_t * line(const group * g, int64_t b, int k) { return g[b].qs[k][0]; }
    static const uint16_t * d(const group * g, int64_t b) { return g[b].d; }
    static const uint16_t * m(const group * g, int64_t b) { return g[b].m; }
};

// Row r's block of group g.
block_q4_1 q4_1_x16_row_block(const block_q4_1_x16 & g, int r);

// 16 rows of nb blocks each (row r at src + r * src_row_bytes) to nb repacked blocks at dst.
void q4_1_x16_pack(const uint8_t * src, size_t src_row_bytes, int64_t nb, block_q4_1_x16 * dst);

} // namespace tmill::quant
