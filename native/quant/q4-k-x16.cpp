#include "quant/q4-k-x16.h"

#include <cstring>

namespace tmill::quant {

void q4_k_x16_pack(const uint8_t * src, size_t src_row_bytes, int64_t nb, block_q4_k_x16 * dst) {
    for (int64_t b = 0; b < nb; ++b) {
        block_q4_k_x16 & out = dst[b];
        for (int r = 0; r < k_x16_rows; ++r) {
            const auto & blk = reinterpret_cast<const block_q4_k *>(src + size_t(r) * src_row_bytes)[b];
            out.d[r] = blk.d;
            out.dmin[r] = blk.dmin;
            uint8_t sc[8], m[8];
            unpack_k4_scales(blk.scales, sc, m);
            for (int j = 0; j < 8; ++j) {
                out.sc[j][r] = sc[j];
                out.m[j][r] = m[j];
            }
            for (int q = 0; q < 32; ++q) std::memcpy(out.qs[q][r], blk.qs + 4 * q, 4);
        }
    }
}

block_q4_k q4_k_x16_row(const block_q4_k_x16 & g, int r) {
    block_q4_k blk;
    blk.d = g.d[r];
    blk.dmin = g.dmin[r];
    uint8_t sc[8], m[8];
    for (int j = 0; j < 8; ++j) {
        sc[j] = g.sc[j][r];
        m[j] = g.m[j][r];
    }
    pack_k4_scales(sc, m, blk.scales);
    for (int q = 0; q < 32; ++q) std::memcpy(blk.qs + 4 * q, g.qs[q][r], 4);
    return blk;
}

void q4_k_x16_unpack(const block_q4_k_x16 * src, int64_t nb, uint8_t * dst, size_t dst_row_bytes) {
    for (int64_t b = 0; b < nb; ++b)
        for (int r = 0; r < k_x16_rows; ++r) reinterpret_cast<block_q4_k *>(dst + size_t(r) * dst_row_bytes)[b] = q4_k_x16_row(src[b], r);
}

} // namespace tmill::quant
