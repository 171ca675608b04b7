// Q6_K rows repacked 16 at a time for the AVX-512 levels (docs/kernels.md, "Q6_K repacked at load"): one
// block_q6_k_x16 holds super-block b of 16 consecutive rows with their bytes interleaved so that one 64-byte load
// carries the same 4 bytes of ql (or of qh) of every row, a row per int32 lane — the kernel then unpacks the
// 6-bit levels of 16 rows at once and takes their dots against a token's quad with one dpbusd. The weight
// bytes come first and the block is padded to whole cache lines (53 of them, 212 bytes a row instead of 210),
// so every load of quads is aligned in an aligned copy. The values are the rows' own: q6_k_x16_row gives the
// original blocks back bit for bit.
#pragma once

#include "quant/q6-k.h"
#include "quant/x16.h"

#include <cstddef>
#include <cstdint>

namespace tmill::quant {

struct block_q6_k_x16 {
    uint8_t ql[32][k_x16_rows][4];   // quad i: bytes 4i .. 4i+3 of the row's ql
    uint8_t qh[16][k_x16_rows][4];   // quad i: bytes 4i .. 4i+3 of the row's qh
    int8_t scales[16][k_x16_rows];   // sub-block j's scale of row r at scales[j][r]
    uint16_t d[k_x16_rows];          // F16 super-block scales
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
