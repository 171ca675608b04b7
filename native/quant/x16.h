// The row count of the 16-row weight layouts repacked at load (quant/q4-k-x16.h, quant/q8-0-x16.h, ...): a group's
// rows fill the 16 int32 lanes of a 512-bit register, or the 16 columns of an AMX tile. And what the layouts of
// 32-element blocks share: the walk of their packers and the quads of qs side by side.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace tmill::quant {

constexpr int k_x16_rows = 16;

// Quads of qs side by side: line k of a block's lines[k][row][4] holds bytes 4k .. 4k + 3 of every row's qs.
// x16_put_quads copies row r's qs into the lines, x16_get_quads takes it back (T: the bytes' type).
template <typename T, int Quads>
void x16_put_quads(T (&lines)[Quads][k_x16_rows][4], int r, const T * qs) {
    for (int k = 0; k < Quads; ++k) std::memcpy(lines[k][r], qs + 4 * k, 4);
}
template <typename T, int Quads>
void x16_get_quads(const T (&lines)[Quads][k_x16_rows][4], int r, T * qs) {
    for (int k = 0; k < Quads; ++k) std::memcpy(qs + 4 * k, lines[k][r], 4);
}

// The walk of a packer: each(entry, h, r, block) for block b < nb of row r of the 16 rows at src (row r at src + r
// * src_row_bytes), Blocks blocks to a group entry (entry dst[b / Blocks], its block h = b % Blocks).
template <typename Block, int Blocks, typename Group, typename Each>
void x16_pack_rows(const uint8_t * src, size_t src_row_bytes, int64_t nb, Group * dst, const Each & each) {
    for (int64_t b = 0; b < nb; ++b)
        for (int r = 0; r < k_x16_rows; ++r)
            each(dst[b / Blocks], int(b % Blocks), r, reinterpret_cast<const Block *>(src + size_t(r) * src_row_bytes)[b]);
}

// Its inverse for one block: row r's block b of the groups at g, which each(entry, h, r, block) fills from entry
// g[b / Blocks], its block h = b % Blocks.
template <typename Block, int Blocks, typename Group, typename Each>
Block x16_row_block(const Group * g, int64_t b, int r, const Each & each) {
    Block blk;
    each(g[b / Blocks], int(b % Blocks), r, blk);
    return blk;
}

// The layouts whose entry holds Blocks blocks as their scales d[h][row] and their quads qs[h] (Q8_0; Q4_0 and IQ4_NL):
// the packer and its inverse.
template <typename Block, int Blocks, typename Group>
void x16_scale_quads_pack(const uint8_t * src, size_t src_row_bytes, int64_t nb, Group * dst) {
    x16_pack_rows<Block, Blocks>(src, src_row_bytes, nb, dst, [](Group & entry, int h, int r, const Block & blk) {
        entry.d[h][r] = blk.d;
        x16_put_quads(entry.qs[h], r, blk.qs);
    });
}
template <typename Block, int Blocks, typename Group>
Block x16_scale_quads_row_block(const Group * g, int64_t b, int r) {
    return x16_row_block<Block, Blocks>(g, b, r, [](const Group & entry, int h, int row, Block & blk) {
        blk.d = entry.d[h][row];
        x16_get_quads(entry.qs[h], row, blk.qs);
    });
}

} // namespace tmill::quant
