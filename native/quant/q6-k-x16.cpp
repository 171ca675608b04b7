#include "quant/q6-k-x16.h"

#include <cstring>

namespace tmill::quant {

void q6_k_x16_pack(const uint8_t * src, size_t src_row_bytes, int64_t nb, block_q6_k_x16 * dst) {
    for (int64_t b = 0; b < nb; ++b) {
        block_q6_k_x16 & out = dst[b];
        std::memset(out.pad, 0, sizeof out.pad);
        for (int r = 0; r < k_x16_rows; ++r) {
            const auto & blk = reinterpret_cast<const block_q6_k *>(src + size_t(r) * src_row_bytes)[b];
            for (int i = 0; i < 32; ++i) std::memcpy(out.ql[i][r], blk.ql + 4 * i, 4);
            for (int i = 0; i < 16; ++i) std::memcpy(out.qh[i][r], blk.qh + 4 * i, 4);
            for (int j = 0; j < 16; ++j) out.scales[j][r] = blk.scales[j];
            out.d[r] = blk.d;
        }
    }
}

block_q6_k q6_k_x16_row(const block_q6_k_x16 & g, int r) {
    block_q6_k blk;
    for (int i = 0; i < 32; ++i) std::memcpy(blk.ql + 4 * i, g.ql[i][r], 4);
    for (int i = 0; i < 16; ++i) std::memcpy(blk.qh + 4 * i, g.qh[i][r], 4);
    for (int j = 0; j < 16; ++j) blk.scales[j] = g.scales[j][r];
    blk.d = g.d[r];
    return blk;
}

} // namespace tmill::quant
