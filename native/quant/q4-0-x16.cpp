#include "quant/q4-0-x16.h"

#include "quant/iq4-nl.h"

#include <cstring>

namespace tmill::quant {

static_assert(sizeof(block_iq4_nl) == sizeof(block_q4_0) && offsetof(block_iq4_nl, qs) == offsetof(block_q4_0, qs),
              "IQ4_NL's blocks take Q4_0's repacked layout");

block_q4_0 q4_0_x16_row_block(const block_q4_0_x16 * g, int64_t b, int r) {
    const block_q4_0_x16 & pair = g[b / k_q4_0_x16_blocks];
    const int h = int(b % k_q4_0_x16_blocks);
    block_q4_0 blk;
    blk.d = pair.d[h][r];
    for (int k = 0; k < k_q4_0_x16_quads; ++k) std::memcpy(blk.qs + 4 * k, pair.qs[h][k][r], 4);
    return blk;
}

void q4_0_x16_pack(const uint8_t * src, size_t src_row_bytes, int64_t nb, block_q4_0_x16 * dst) {
    for (int64_t b = 0; b < nb; ++b) {
        block_q4_0_x16 & pair = dst[b / k_q4_0_x16_blocks];
        const int h = int(b % k_q4_0_x16_blocks);
        for (int r = 0; r < k_x16_rows; ++r) {
            const block_q4_0 & blk = reinterpret_cast<const block_q4_0 *>(src + size_t(r) * src_row_bytes)[b];
            pair.d[h][r] = blk.d;
            for (int k = 0; k < k_q4_0_x16_quads; ++k) std::memcpy(pair.qs[h][k][r], blk.qs + 4 * k, 4);
        }
    }
}

} // namespace tmill::quant
