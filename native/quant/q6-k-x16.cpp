#include "quant/q6-k-x16.h"

#include <cstring>

namespace tmill::quant {

void q6_k_x16_pack(const uint8_t * src, size_t src_row_bytes, int64_t nb, block_q6_k_x16 * dst) {
    for (int64_t b = 0; b < nb; ++b) {
        block_q6_k_x16 & out = dst[b];
        std::memset(out.pad, 0, sizeof out.pad);
        for (int r = 0; r < k_x16_rows; ++r) {
            const auto & blk = reinterpret_cast<const block_q6_k *>(src + size_t(r) * src_row_bytes)[b];
            for (int h = 0; h < 2; ++h) {
                block_q6_k_x16::half_t & half = out.half[h];
                for (int k = 0; k < 8; ++k) {
                    std::memcpy(half.low[k].ql[r], blk.ql + 64 * h + 4 * k, 4);
                    std::memcpy(half.low[k].qh[r], blk.qh + 32 * h + 4 * k, 4);
                    std::memcpy(half.ql_high[k][r], blk.ql + 64 * h + 32 + 4 * k, 4);
                    half.scales[k][r] = blk.scales[8 * h + k];
                }
            }
            out.d[r] = blk.d;
        }
    }
}

block_q6_k q6_k_x16_row(const block_q6_k_x16 & g, int r) {
    block_q6_k blk;
    for (int h = 0; h < 2; ++h) {
        const block_q6_k_x16::half_t & half = g.half[h];
        for (int k = 0; k < 8; ++k) {
            std::memcpy(blk.ql + 64 * h + 4 * k, half.low[k].ql[r], 4);
            std::memcpy(blk.qh + 32 * h + 4 * k, half.low[k].qh[r], 4);
            std::memcpy(blk.ql + 64 * h + 32 + 4 * k, half.ql_high[k][r], 4);
            blk.scales[8 * h + k] = half.scales[k][r];
        }
    }
    blk.d = g.d[r];
    return blk;
}

} // namespace tmill::quant
