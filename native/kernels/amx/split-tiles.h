// The super-block products of the K-quant AMX kernels (kernels/amx/matmul-q4-k.cpp, matmul-q6-k.cpp): each weight
// times its sub-block's scale, split as 2^S * hi + lo with both parts int8, so that a super-block's exact scaled
// sum for 16 rows x n tokens is ((hi . x) << S) + (lo . x) — two C tiles accumulated over the super-block's 4 pairs
// of 32-element sub-blocks, K = 64 bytes a product, in either operand layout of tile-session.h (tokens_a: A the
// tokens' 64 activations of the pair, B the 16 rows' hi or lo values in VNNI order; weights_a: A the rows' values,
// B the tokens' in VNNI order). Internal linkage, as kernels/tiling.h.
#pragma once

#include "kernels/amx/tile-ops.h"
#include "kernels/amx/tile-session.h"

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace tmill::kernels {
namespace {

constexpr int k_split_rows = k_tile_weight_rows;                                   // 16 rows a group
constexpr int k_split_pairs = 4;                                                   // pairs of sub-blocks per super-block
constexpr int k_split_pair_bytes = 64;                                             // K of a product: a pair's activations
constexpr size_t k_split_tile_bytes = size_t(k_split_rows) * k_split_pair_bytes;   // 1024: one A or B tile
// A group's weights as the B tiles read them, per super-block: for each pair, the hi tile and the lo tile.
constexpr size_t k_split_weight_block = size_t(k_split_pairs) * 2 * k_split_tile_bytes;   // 8192

// The product C += tokens . weights in the layout's operand order (tile numbers literal: they are encoded).
#define TM_SPLIT_DP(C, TX, TW)                                     \
    do {                                                           \
        if constexpr (Layout == tile_layout::tokens_a)             \
            TM_TILE_DPBSSD(C, TX, TW);                             \
        else                                                       \
            TM_TILE_DPBSSD(C, TW, TX);                             \
    } while (0)

// Pair C of super-block B: its two products, accumulated into the C tiles CH (hi) and CL (lo), through the tokens'
// tile TX (the weights' tiles tmm2 and tmm3). Every tile is stored with rows of 64 bytes.
#define TM_SPLIT_PAIR(B, C, TX, CH, CL)                                                                    \
    do {                                                                                                   \
        const uint8_t * wt = tiles + size_t(B) * k_split_weight_block + size_t(2 * (C)) * k_split_tile_bytes; \
        TM_TILE_LOADD(TX, pack + size_t(B) * act_block + size_t(C) * k_split_tile_bytes, k_split_pair_bytes); \
        TM_TILE_LOADD(2, wt, k_split_pair_bytes);                                                          \
        TM_SPLIT_DP(CH, TX, 2);                                                                            \
        TM_TILE_LOADD(3, wt + k_split_tile_bytes, k_split_pair_bytes);                                     \
        TM_SPLIT_DP(CL, TX, 3);                                                                            \
    } while (0)

// Super-block B's products into C tiles CH and CL, zeroed first, then stored into hi[D] and lo[D].
#define TM_SPLIT_SUPER_BLOCK(B, CH, CL, D)              \
    do {                                                \
        TM_TILE_ZERO(CH);                               \
        TM_TILE_ZERO(CL);                               \
        TM_SPLIT_PAIR(B, 0, 0, CH, CL);                 \
        TM_SPLIT_PAIR(B, 1, 1, CH, CL);                 \
        TM_SPLIT_PAIR(B, 2, 0, CH, CL);                 \
        TM_SPLIT_PAIR(B, 3, 1, CH, CL);                 \
        TM_TILE_STORED(CH, hi[D], 4 * k_split_rows);    \
        TM_TILE_STORED(CL, lo[D], 4 * k_split_rows);    \
    } while (0)

// The products of one group of 16 rows (tiles: its super-blocks' hi and lo weight tiles, k_split_weight_block
// bytes each) with the N packed tokens of pack (act_block bytes per super-block, the 4 pair tiles first, 64-byte
// aligned), super-block by super-block: fold(b, hi, lo), super-block b's two sums for token t and row r at
// hi[t][r] and lo[t][r] (tokens_a) or hi[r][t] and lo[r][t] (weights_a). Super-block b + 1's products (C tiles tmm4/tmm5 or tmm6/tmm7 by parity) are issued before b's sums
// are folded, so the fold overlaps them. Tiles configured by the caller for N tokens and K = 64. Inlined, with
// the fold (always_inline on the caller's lambda too): out of line, the fold's accumulators lived in memory
// (the Q4_K prompt tiles ~10 % slower).
template <tile_layout Layout, int N, typename Fold>
__attribute__((always_inline)) inline void split_super_blocks(const uint8_t * tiles, const uint8_t * pack, size_t act_block, int64_t nb, const Fold & fold) {
    constexpr int c_rows = Layout == tile_layout::tokens_a ? N : k_split_rows;
    // weights_a with N < 16 stores N sums a row: the lanes past them are read (and never stored), so they start
    // at zero.
    alignas(64) int32_t hi[2][c_rows][k_split_rows], lo[2][c_rows][k_split_rows];
    if constexpr (Layout == tile_layout::weights_a && N < k_split_rows) {
        std::memset(hi, 0, sizeof hi);
        std::memset(lo, 0, sizeof lo);
    }
    TM_SPLIT_SUPER_BLOCK(0, 4, 5, 0);
    for (int64_t b = 0; b < nb; ++b) {
        if (b + 1 < nb) {
            if (b % 2 == 0) TM_SPLIT_SUPER_BLOCK(b + 1, 6, 7, 1);
            else TM_SPLIT_SUPER_BLOCK(b + 1, 4, 5, 0);
        }
        fold(b, hi[b % 2], lo[b % 2]);
    }
}

#undef TM_SPLIT_SUPER_BLOCK
#undef TM_SPLIT_PAIR
#undef TM_SPLIT_DP

} // namespace
} // namespace tmill::kernels
