#include "quant/q5-0-x16.h"

#include <cstring>

namespace tmill::quant {

block_q5_0 q5_0_x16_row_block(const block_q5_0_x16 * g, int64_t b, int r) {
    const block_q5_0_x16 & pair = g[b / k_q5_0_x16_blocks];
    const int h = int(b % k_q5_0_x16_blocks);
    block_q5_0 blk;
    blk.d = pair.d[h][r];
    std::memcpy(blk.qh, pair.blk[h].qh[r], 4);
    for (int k = 0; k < k_q5_0_x16_quads; ++k) std::memcpy(blk.qs + 4 * k, pair.blk[h].qs[k][r], 4);
    return blk;
}

void q5_0_x16_pack(const uint8_t * src, size_t src_row_bytes, int64_t nb, block_q5_0_x16 * dst) {
    for (int64_t b = 0; b < nb; ++b) {
        block_q5_0_x16 & pair = dst[b / k_q5_0_x16_blocks];
        const int h = int(b % k_q5_0_x16_blocks);
        for (int r = 0; r < k_x16_rows; ++r) {
            const block_q5_0 & blk = reinterpret_cast<const block_q5_0 *>(src + size_t(r) * src_row_bytes)[b];
            pair.d[h][r] = blk.d;
            std::memcpy(pair.blk[h].qh[r], blk.qh, 4);
            for (int k = 0; k < k_q5_0_x16_quads; ++k) std::memcpy(pair.blk[h].qs[k][r], blk.qs + 4 * k, 4);
        }
    }
}

} // namespace tmill::quant
