#include "quant/q8-0-x16.h"

namespace tmill::quant {

block_q8_0 q8_0_x16_row_block(const block_q8_0_x16 * g, int64_t b, int r) {
    const block_q8_0_x16 & pair = g[b / k_q8_0_x16_blocks];
    const int h = int(b % k_q8_0_x16_blocks);
    block_q8_0 blk;
    blk.d = pair.d[h][r];
    x16_get_quads(pair.qs[h], r, blk.qs);
    return blk;
}

void q8_0_x16_pack(const uint8_t * src, size_t src_row_bytes, int64_t nb, block_q8_0_x16 * dst) {
    x16_pack_rows<block_q8_0, k_q8_0_x16_blocks>(src, src_row_bytes, nb, dst, [](block_q8_0_x16 & pair, int h, int r, const block_q8_0 & blk) {
        pair.d[h][r] = blk.d;
        x16_put_quads(pair.qs[h], r, blk.qs);
    });
}

} // namespace tmill::quant
