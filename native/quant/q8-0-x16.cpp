#include "quant/q8-0-x16.h"

namespace tmill::quant {

block_q8_0 q8_0_x16_row_block(const block_q8_0_x16 * g, int64_t b, int r) {
    return x16_scale_quads_row_block<block_q8_0, k_q8_0_x16_blocks>(g, b, r);
}

void q8_0_x16_pack(const uint8_t * src, size_t src_row_bytes, int64_t nb, block_q8_0_x16 * dst) {
    x16_scale_quads_pack<block_q8_0, k_q8_0_x16_blocks>(src, src_row_bytes, nb, dst);
}

} // namespace tmill::quant
