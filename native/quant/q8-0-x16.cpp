#include "quant/q8-0-x16.h"

#include <cstring>

namespace tmill::quant {

block_q8_0 q8_0_x16_row_block(const block_q8_0_x16 * g, int64_t b, int r) {
    const block_q8_0_x16 & pair = g[b / k_q8_0_x16_blocks];
    const int h = int(b % k_q8_0_x16_blocks);
    block_q8_0 blk;
    blk.d = pair.d[h][r];
    for (int k = 0; k < k_q8_0_x16_quads; ++k) std::memcpy(blk.qs + 4 * k, pair.qs[h][k][r], 4);
    return blk;
}

void q8_0_x16_pack(const uint8_t * src, size_t src_row_bytes, int64_t nb, block_q8_0_x16 * dst) {
    for (int64_t b = 0; b < nb; ++b) {
        block_q8_0_x16 & pair = dst[b / k_q8_0_x16_blocks];
        const int h = int(b % k_q8_0_x16_blocks);
        for (int r = 0; r < k_x16_rows; ++r) {
            const block_q8_0 & blk = reinterpret_cast<const block_q8_0 *>(src + size_t(r) * src_row_bytes)[b];
            pair.d[h][r] = blk.d;
            for (int k = 0; k < k_q8_0_x16_quads; ++k) std::memcpy(pair.qs[h][k][r], blk.qs + 4 * k, 4);
        }
    }
}

} // namespace tmill::quant
