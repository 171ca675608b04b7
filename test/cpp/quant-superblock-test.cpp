// The 256-element super-block formats added for real-world files (Q2_K, Q3_K, IQ4_XS): hand-made blocks,
// built from the layout each header documents (independently of the dequantizers and of the unpacking
// helpers), dequantize to exactly the values the layout defines.
#include "check.h"

#include "base/error.h"
#include "quant/fp16.h"
#include "quant/iq4-xs.h"
#include "quant/q2-k.h"
#include "quant/q3-k.h"
#include "quant/quant.h"

#include <cstring>

using namespace tmill;
using namespace tmill::quant;

namespace {

// Element e's 2-bit field: in 128-element half h, element 128h + 32k + l is bits 2k..2k+1 of qs[32h + l].
void set_2bit(uint8_t * qs, int e, int v) {
    const int h = e / 128, k = (e % 128) / 32, l = e % 32;
    uint8_t & byte = qs[32 * h + l];
    byte = uint8_t((byte & ~(3 << (2 * k))) | ((v & 3) << (2 * k)));
}

// Packs 16 6-bit values (0..63) into Q3_K's 12 scale bytes as the header describes.
void pack_q3_scales(const int * s6, uint8_t * q) {
    std::memset(q, 0, 12);
    for (int s = 0; s < 16; ++s) {
        if (s < 8) q[s] = uint8_t(q[s] | (s6[s] & 15));
        else q[s - 8] = uint8_t(q[s - 8] | ((s6[s] & 15) << 4));
        q[8 + s % 4] = uint8_t(q[8 + s % 4] | ((s6[s] >> 4) << (2 * (s / 4))));
    }
}

} // namespace

TM_TEST("quant: q2_k hand-made block dequantizes exactly") {
    block_q2_k b{};
    b.d = fp32_to_fp16(0.5f);
    b.dmin = fp32_to_fp16(0.25f);
    for (int s = 0; s < 16; ++s) b.scales[s] = uint8_t(((s * 5 + 1) % 16) | (((s * 3 + 2) % 16) << 4));
    for (int e = 0; e < 256; ++e) set_2bit(b.qs, e, (e * 7 + e / 64) % 4);
    float y[256];
    dequantize_row_q2_k(&b, y, 256);
    for (int e = 0; e < 256; ++e) {
        const int s = e / 16;
        CHECK_EQ(y[e], 0.5f * float((s * 5 + 1) % 16) * float((e * 7 + e / 64) % 4) - 0.25f * float((s * 3 + 2) % 16));
    }
    CHECK_THROWS_CODE(dequantize_row_q2_k(&b, y, 128), invalid_argument);
}

TM_TEST("quant: q3_k hand-made block dequantizes exactly (every scale bit, every hmask bit)") {
    block_q3_k b{};
    b.d = fp32_to_fp16(0.0625f);
    int s6[16];
    for (int s = 0; s < 16; ++s) s6[s] = (s * 23 + 7) % 64;
    s6[3] = 0;
    s6[12] = 63;
    pack_q3_scales(s6, b.scales);
    for (int e = 0; e < 256; ++e) {
        const int v = (e * 5 + e / 32) % 8;   // the 3-bit value 0..7; the weight is v - 4
        set_2bit(b.qs, e, v & 3);
        if (v & 4) b.hmask[e % 32] = uint8_t(b.hmask[e % 32] | (1 << (e / 32)));
    }
    float y[256];
    dequantize_row_q3_k(&b, y, 256);
    for (int e = 0; e < 256; ++e)
        CHECK_EQ(y[e], 0.0625f * float(s6[e / 16] - 32) * float((e * 5 + e / 32) % 8 - 4));
    int8_t sc[16];
    unpack_q3k_scales(b.scales, sc);
    for (int s = 0; s < 16; ++s) CHECK_EQ(int(sc[s]), s6[s] - 32);
}

TM_TEST("quant: iq4_xs hand-made block dequantizes exactly") {
    block_iq4_xs b{};
    b.d = fp32_to_fp16(0.03125f);
    int ls[8] = {0, 63, 32, 17, 48, 5, 40, 31};
    for (int j = 0; j < 8; ++j) {
        b.scales_l[j / 2] = uint8_t(b.scales_l[j / 2] | ((ls[j] & 15) << (4 * (j % 2))));
        b.scales_h = uint16_t(b.scales_h | ((ls[j] >> 4) << (2 * j)));
    }
    for (int e = 0; e < 256; ++e) {
        const int j = e / 32, k = e % 32, v = (e * 3 + j) % 16;
        uint8_t & byte = b.qs[16 * j + k % 16];
        byte = uint8_t(k < 16 ? (byte & 0xf0) | v : (byte & 0x0f) | (v << 4));
    }
    float y[256];
    dequantize_row_iq4_xs(&b, y, 256);
    for (int e = 0; e < 256; ++e)
        CHECK_EQ(y[e], 0.03125f * float(ls[e / 32] - 32) * float(k_iq4nl_values[(e * 3 + e / 32) % 16]));
}

TM_TEST("quant: geometry and activation types of the added formats") {
    CHECK_EQ(row_bytes(ggml_type::q4_1, 64), size_t(40));
    CHECK_EQ(row_bytes(ggml_type::q5_0, 64), size_t(44));
    CHECK_EQ(row_bytes(ggml_type::q5_1, 32), size_t(24));
    CHECK_EQ(row_bytes(ggml_type::iq4_nl, 96), size_t(54));
    CHECK_EQ(row_bytes(ggml_type::q8_1, 32), size_t(36));
    CHECK_EQ(row_bytes(ggml_type::q2_k, 512), size_t(168));
    CHECK_EQ(row_bytes(ggml_type::q3_k, 256), size_t(110));
    CHECK_EQ(row_bytes(ggml_type::iq4_xs, 256), size_t(136));
    // ggml's vec_dot_type of each weight format.
    CHECK(activation_type(ggml_type::q4_1) == ggml_type::q8_1);
    CHECK(activation_type(ggml_type::q5_1) == ggml_type::q8_1);
    CHECK(activation_type(ggml_type::q5_0) == ggml_type::q8_0);
    CHECK(activation_type(ggml_type::iq4_nl) == ggml_type::q8_0);
    CHECK(activation_type(ggml_type::q2_k) == ggml_type::q8_k);
    CHECK(activation_type(ggml_type::q3_k) == ggml_type::q8_k);
    CHECK(activation_type(ggml_type::iq4_xs) == ggml_type::q8_k);
    // The geometry agrees with the GGUF type table.
    for (ggml_type t : {ggml_type::q4_1, ggml_type::q5_0, ggml_type::q5_1, ggml_type::iq4_nl, ggml_type::q8_1,
                        ggml_type::q2_k, ggml_type::q3_k, ggml_type::iq4_xs}) {
        const ggml_type_traits tr = ggml_type_info(uint32_t(t));
        CHECK_EQ(int64_t(tr.block_size), type_block_size(t));
        CHECK_EQ(size_t(tr.type_size), type_block_bytes(t));
        CHECK(ggml_type_supported(t) == (t != ggml_type::q8_1));
    }
    CHECK_THROWS_CODE(row_bytes(ggml_type::q3_k, 100), invalid_argument);
}
