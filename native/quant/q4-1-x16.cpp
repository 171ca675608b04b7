#include "quant/q4-1-x16.h"

namespace tmill::quant {

block_q4_1 q4_1_x16_row_block(const block_q4_1_x16 & g, int r) {
    block_q4_1 blk;
    blk.d = g.d[r];
    blk.m = g.m[r];
    x16_get_quads(g.qs, r, blk.qs);
    return blk;
}

void q4_1_x16_pack(const uint8_t * src, size_t src_row_bytes, int64_t nb, block_q4_1_x16 * dst) {
    x16_pack_rows<block_q4_1, 1>(src, src_row_bytes, nb, dst, [](block_q4_1_x16 & out, int, int r, const block_q4_1 & blk) {
        out.d[r] = blk.d;
        out.m[r] = blk.m;
        x16_put_quads(out.qs, r, blk.qs);
    });
}

} // namespace tmill::quant
