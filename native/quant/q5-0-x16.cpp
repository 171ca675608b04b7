#include "quant/q5-0-x16.h"

#include <cstring>

namespace tmill::quant {

block_q5_0 q5_0_x16_row_block(const block_q5_0_x16 * g, int64_t b, int r) {
    return x16_row_block<block_q5_0, k_q5_0_x16_blocks>(g, b, r, [](const block_q5_0_x16 & pair, int h, int row, block_q5_0 & blk) {
        blk.d = pair.d[h][row];
        std::memcpy(blk.qh, pair.blk[h].qh[row], 4);
        x16_get_quads(pair.blk[h].qs, row, blk.qs);
    });
}

void q5_0_x16_pack(const uint8_t * src, size_t src_row_bytes, int64_t nb, block_q5_0_x16 * dst) {
    x16_pack_rows<block_q5_0, k_q5_0_x16_blocks>(src, src_row_bytes, nb, dst, [](block_q5_0_x16 & pair, int h, int r, const block_q5_0 & blk) {
        pair.d[h][r] = blk.d;
        std::memcpy(pair.blk[h].qh[r], blk.qh, 4);
        x16_put_quads(pair.blk[h].qs, r, blk.qs);
    });
}

} // namespace tmill::quant
