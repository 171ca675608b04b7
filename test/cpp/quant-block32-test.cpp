// The 32-element block formats added for real-world files (Q4_1, Q5_0, Q5_1, IQ4_NL) and the Q8_1
// activation format: hand-made blocks, built from the layout each header documents (independently of
// the dequantizers), dequantize to exactly the values the layout defines.
#include "check.h"

#include "base/error.h"
#include "quant/fp16.h"
#include "quant/iq4-nl.h"
#include "quant/q4-1.h"
#include "quant/q5-0.h"
#include "quant/q5-1.h"
#include "quant/q8-1.h"
#include "quant/quant.h"

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

using namespace tmill;
using namespace tmill::quant;

namespace {

// Writes the 5-bit value v of element j into a Q5_0/Q5_1 block's qs/qh as the header describes.
void set_q5(uint8_t * qs, uint8_t * qh, int j, int v) {
    uint8_t & byte = qs[j % 16];
    if (j < 16) byte = uint8_t((byte & 0xf0) | (v & 15));
    else byte = uint8_t((byte & 0x0f) | ((v & 15) << 4));
    if (v & 16) qh[j / 8] = uint8_t(qh[j / 8] | (1 << (j % 8)));   // bit j of the little-endian uint32
}

} // namespace

TM_TEST("quant: q4_1 hand-made block dequantizes exactly") {
    block_q4_1 b[2]{};
    b[0].d = fp32_to_fp16(0.25f);
    b[0].m = fp32_to_fp16(-1.5f);
    b[1].d = fp32_to_fp16(2.0f);
    b[1].m = fp32_to_fp16(0.125f);
    for (int j = 0; j < 16; ++j) {
        b[0].qs[j] = uint8_t(j | ((15 - j) << 4));
        b[1].qs[j] = uint8_t(((j * 3) % 16) | (((j * 5) % 16) << 4));
    }
    float y[64];
    dequantize_row_q4_1(b, y, 64);
    for (int j = 0; j < 16; ++j) {
        CHECK_EQ(y[j], 0.25f * float(j) - 1.5f);
        CHECK_EQ(y[j + 16], 0.25f * float(15 - j) - 1.5f);
        CHECK_EQ(y[32 + j], 2.0f * float((j * 3) % 16) + 0.125f);
        CHECK_EQ(y[48 + j], 2.0f * float((j * 5) % 16) + 0.125f);
    }
    CHECK_THROWS_CODE(dequantize_row_q4_1(b, y, 40), invalid_argument);
}

TM_TEST("quant: q5_0 and q5_1 hand-made blocks dequantize exactly (every fifth-bit position)") {
    block_q5_0 a{};
    block_q5_1 b{};
    a.d = fp32_to_fp16(0.5f);
    b.d = fp32_to_fp16(0.125f);
    b.m = fp32_to_fp16(-2.0f);
    for (int j = 0; j < 32; ++j) {
        set_q5(a.qs, a.qh, j, (j * 7 + 3) % 32);
        set_q5(b.qs, b.qh, j, 31 - j);
    }
    float ya[32], yb[32];
    dequantize_row_q5_0(&a, ya, 32);
    dequantize_row_q5_1(&b, yb, 32);
    for (int j = 0; j < 32; ++j) {
        CHECK_EQ(ya[j], 0.5f * float((j * 7 + 3) % 32 - 16));
        CHECK_EQ(yb[j], 0.125f * float(31 - j) - 2.0f);
    }
    CHECK_THROWS_CODE(dequantize_row_q5_0(&a, ya, 31), invalid_argument);
    CHECK_THROWS_CODE(dequantize_row_q5_1(&b, yb, 33), invalid_argument);
}

TM_TEST("quant: iq4_nl hand-made block dequantizes through the non-linear table") {
    // The table is ggml's kvalues_iq4nl.
    const int8_t want[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};
    CHECK(std::memcmp(want, k_iq4nl_values, 16) == 0);
    block_iq4_nl b{};
    b.d = fp32_to_fp16(-0.0625f);
    for (int j = 0; j < 16; ++j) b.qs[j] = uint8_t(j | (((j + 9) % 16) << 4));
    float y[32];
    dequantize_row_iq4_nl(&b, y, 32);
    for (int j = 0; j < 16; ++j) {
        CHECK_EQ(y[j], -0.0625f * float(want[j]));
        CHECK_EQ(y[j + 16], -0.0625f * float(want[(j + 9) % 16]));
    }
}

TM_TEST("quant: q8_1 quantizer: q8_0's rounding plus s = d * sum(q)") {
    std::mt19937 rng(5);
    std::normal_distribution<float> dist(0.0f, 3.0f);
    std::vector<float> x(128), y(128);
    for (auto & v : x) v = dist(rng);
    std::vector<block_q8_1> q(4);
    quantize_row_q8_1(x.data(), q.data(), 128);
    // The quants and d are Q8_0's (same formula), so compare against the Q8_0 quantizer.
    std::vector<uint8_t> q80(quant::row_bytes(ggml_type::q8_0, 128));
    quant::quantize_row(ggml_type::q8_0, x.data(), q80.data(), 128);
    for (int b = 0; b < 4; ++b) {
        const uint8_t * blk = q80.data() + 34 * b;
        uint16_t d;
        std::memcpy(&d, blk, 2);
        CHECK_EQ(q[b].d, d);
        CHECK(std::memcmp(q[b].qs, blk + 2, 32) == 0);
        float amax = 0.0f;
        int sum = 0;
        for (int j = 0; j < 32; ++j) {
            amax = std::fmax(amax, std::fabs(x[32 * b + j]));
            sum += q[b].qs[j];
        }
        CHECK_EQ(q[b].s, fp32_to_fp16(amax / 127.0f * float(sum)));
    }
    dequantize_row_q8_1(q.data(), y.data(), 128);
    for (int i = 0; i < 128; ++i) CHECK(std::fabs(y[i] - x[i]) <= fp16_to_fp32(q[i / 32].d) * 0.5f + 1e-3f * std::fabs(x[i]));
    std::vector<float> zeros(32, 0.0f);
    quantize_row_q8_1(zeros.data(), q.data(), 32);
    CHECK_EQ(q[0].d, uint16_t(0));
    CHECK_EQ(q[0].s, uint16_t(0));
}
