#include "quant/q4-1-x16.h"

#include <cstring>

namespace tmill::quant {

block_q4_1 q4_1_x16_row_block(const block_q4_1_x16 & g, int r) {
    block_q4_1 blk;
    blk.d = g.d[r];
    blk.m = g.m[r];
    for (int k = 0; k < k_q4_1_x16_quads; ++k) std::memcpy(blk.qs + 4 * k, g.qs[k][r], 4);
    return blk;
}

void q4_1_x16_pack(const uint8_t * src, size_t src_row_bytes, int64_t nb, block_q4_1_x16 * dst) {
    for (int64_t b = 0; b < nb; ++b) {
        block_q4_1_x16 & out = dst[b];
        for (int r = 0; r < k_x16_rows; ++r) {
            const block_q4_1 & blk = reinterpret_cast<const block_q4_1 *>(src + size_t(r) * src_row_bytes)[b];
            out.d[r] = blk.d;
            out.m[r] = blk.m;
            for (int k = 0; k < k_q4_1_x16_quads; ++k) std::memcpy(out.qs[k][r], blk.qs + 4 * k, 4);
        }
    }
}

} // namespace tmill::quant
