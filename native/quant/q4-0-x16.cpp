#include "quant/q4-0-x16.h"

#include "quant/iq4-nl.h"

namespace tmill::quant {

static_assert(sizeof(block_iq4_nl) == sizeof(block_q4_0) && offsetof(block_iq4_nl, qs) == offsetof(block_q4_0, qs),
              "IQ4_NL's blocks take Q4_0's repacked layout");

block_q4_0 q4_0_x16_row_block(const block_q4_0_x16 * g, int64_t b, int r) {
    return x16_scale_quads_row_block<block_q4_0, k_q4_0_x16_blocks>(g, b, r);
}

void q4_0_x16_pack(const uint8_t * src, size_t src_row_bytes, int64_t nb, block_q4_0_x16 * dst) {
    x16_scale_quads_pack<block_q4_0, k_q4_0_x16_blocks>(src, src_row_bytes, nb, dst);
}

} // namespace tmill::quant
