// Q6_K rows repacked 16 at a time for the AVX-512 levels (docs/kernels.md, "Q6_K repacked at load"): one
// block_q6_k_x16 holds super-block b of 16 consecutive rows with their bytes interleaved so that one 64-byte load
// carries the same 4 bytes of ql (or of qh) of every row, a row per int32 lane — the kernel then unpacks the
// 6-bit levels of 16 rows at once and takes their dots against a token's quad with one dpbusd. The lines are laid
// out in the order the kernel first reads them (each half of the super-block: its low ql quads beside the qh
// quads that complete them, its scales, its high ql quads), so a group's blocks are one forward stream that the
// hardware prefetcher follows; the block is padded to whole cache lines (53 of them, 212 bytes a row instead of
// 210), so every load of quads is aligned in an aligned copy. The values are the rows' own: q6_k_x16_row gives
// the original blocks back bit for bit.
#pragma once

#include "quant/q6-k.h"
#include "quant/x16.h"

#include <cstddef>
#include <cstdint>

namespace tmill::quant {

struct block_q6_k_x16 {
    // Elements 128h .. 128h + 127 of the rows (half h of the super-block, h = 0 or 1).
    struct half_t {
        struct {
            uint8_t ql[k_x16_rows][4];   // bytes 64h + 4k .. + 3 of the row's ql (low quad k)
            uint8_t qh[k_x16_rows][4];   // bytes 32h + 4k .. + 3 of the row's qh
        } low[8];
        int8_t scales[8][k_x16_rows];       // sub-block 8h + j's scale of row r at scales[j][r]
        uint8_t ql_high[8][k_x16_rows][4];  // bytes 64h + 32 + 4k .. + 3 of the row's ql (high quad k)
    } half[2];
    uint16_t d[k_x16_rows];   // F16 super-block scales
    uint8_t pad[32];
};
static_assert(sizeof(block_q6_k_x16) == 53 * 64, "16 rows of a Q6_K super-block in whole cache lines");

// The bytes of one repacked row of n_in weights (a 16-row group is 16 times this): 212 per super-block.
constexpr size_t q6_k_x16_row_bytes(int64_t n_in) { return size_t(n_in / qk_k) * sizeof(block_q6_k_x16) / k_x16_rows; }

// Row r's original block.
block_q6_k q6_k_x16_row(const block_q6_k_x16 & g, int r);

// 16 rows of nb super-blocks each (row r at src + r * src_row_bytes) to nb repacked blocks at dst.
void q6_k_x16_pack(const uint8_t * src, size_t src_row_bytes, int64_t nb, block_q6_k_x16 * dst);

} // namespace tmill::quant
