// Block formats: exact dequantization of hand-made blocks (built from the layout as documented in
// each header, independently of the dequantizers), F16/BF16 conversions, reference quantizers.
#include "check.h"

#include "base/error.h"
#include "quant/fp16.h"
#include "quant/q4-0.h"
#include "quant/q4-k.h"
#include "quant/q5-k.h"
#include "quant/q6-k.h"
#include "quant/q8-0.h"
#include "quant/q8-k.h"
#include "quant/quant.h"

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace tmill;
using namespace tmill::quant;

namespace {

// Sets the 4-bit value of element e of a Q4_K/Q5_K nibble array.
void set_k4_nibble(uint8_t * qs, int e, int v) {
    const int c = e / 64, k = e % 64;
    uint8_t & byte = qs[32 * c + (k % 32)];
    if (k < 32) byte = uint8_t((byte & 0xf0) | v);
    else byte = uint8_t((byte & 0x0f) | (v << 4));
}

} // namespace

TM_TEST("quant: fp16 conversions are exact and round to nearest even") {
    CHECK_EQ(fp32_to_fp16(1.0f), 0x3c00);
    CHECK_EQ(fp32_to_fp16(-2.0f), 0xc000);
    CHECK_EQ(fp32_to_fp16(0.0f), 0x0000);
    CHECK_EQ(fp32_to_fp16(-0.0f), 0x8000);
    CHECK_EQ(fp32_to_fp16(65504.0f), 0x7bff);
    CHECK_EQ(fp32_to_fp16(65519.0f), 0x7bff);
    CHECK_EQ(fp32_to_fp16(65520.0f), 0x7c00);
    CHECK_EQ(fp32_to_fp16(std::ldexp(1.0f, -24)), 0x0001);
    CHECK_EQ(fp32_to_fp16(std::ldexp(1.0f, -25)), 0x0000);              // tie -> even (0)
    CHECK_EQ(fp32_to_fp16(std::ldexp(3.0f, -25)), 0x0002);              // tie -> even (2)
    CHECK_EQ(fp32_to_fp16(1.0f + std::ldexp(1.0f, -11)), 0x3c00);       // tie -> even
    CHECK_EQ(fp32_to_fp16(1.0f + std::ldexp(3.0f, -11)), 0x3c02);       // tie -> even
    CHECK_EQ(fp32_to_fp16(0.1f), 0x2e66);
    CHECK_EQ(fp32_to_fp16(INFINITY), 0x7c00);
    CHECK((fp32_to_fp16(NAN) & 0x7c00) == 0x7c00 && (fp32_to_fp16(NAN) & 0x3ff) != 0);
    CHECK_EQ(fp16_to_fp32(0x3555), 0.333251953125f);
    CHECK_EQ(fp16_to_fp32(0x0001), std::ldexp(1.0f, -24));
    CHECK_EQ(fp16_to_fp32(0xfbff), -65504.0f);
    int mismatches = 0;
    for (uint32_t h = 0; h < 65536; ++h) {
        if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff)) continue;  // NaNs
        if (fp32_to_fp16(fp16_to_fp32(uint16_t(h))) != h) ++mismatches;
    }
    CHECK_EQ(mismatches, 0);
}

TM_TEST("quant: bf16 conversions round to nearest even") {
    CHECK_EQ(fp32_to_bf16(1.0f), 0x3f80);
    CHECK_EQ(bf16_to_fp32(0xc040), -3.0f);
    float f;
    uint32_t u = 0x3f808000u;  // exactly halfway between 0x3f80 and 0x3f81 -> even
    std::memcpy(&f, &u, 4);
    CHECK_EQ(fp32_to_bf16(f), 0x3f80);
    u = 0x3f818000u;           // halfway between 0x3f81 and 0x3f82 -> even
    std::memcpy(&f, &u, 4);
    CHECK_EQ(fp32_to_bf16(f), 0x3f82);
    CHECK(std::isnan(bf16_to_fp32(fp32_to_bf16(NAN))));
}

TM_TEST("quant: q8_0 hand-made block dequantizes exactly") {
    block_q8_0 b[2];
    b[0].d = fp32_to_fp16(0.5f);
    b[1].d = fp32_to_fp16(-0.125f);
    for (int j = 0; j < 32; ++j) { b[0].qs[j] = int8_t(j - 16); b[1].qs[j] = int8_t(j == 0 ? -128 : 127 - j); }
    float y[64];
    dequantize_row_q8_0(b, y, 64);
    for (int j = 0; j < 32; ++j) {
        CHECK_EQ(y[j], 0.5f * float(j - 16));
        CHECK_EQ(y[32 + j], -0.125f * float(j == 0 ? -128 : 127 - j));
    }
    CHECK_THROWS_CODE(dequantize_row_q8_0(b, y, 48), invalid_argument);
}

TM_TEST("quant: q4_0 hand-made block dequantizes exactly") {
    block_q4_0 b;
    b.d = fp32_to_fp16(0.25f);
    for (int j = 0; j < 16; ++j) b.qs[j] = uint8_t(j | ((15 - j) << 4));
    float y[32];
    dequantize_row_q4_0(&b, y, 32);
    for (int j = 0; j < 16; ++j) {
        CHECK_EQ(y[j], 0.25f * float(j - 8));
        CHECK_EQ(y[j + 16], 0.25f * float(7 - j));
    }
}

TM_TEST("quant: k4 scale packing round-trips every 6-bit value") {
    for (int base = 0; base < 64; base += 8) {
        uint8_t sc[8], m[8], q[12], sc2[8], m2[8];
        for (int j = 0; j < 8; ++j) { sc[j] = uint8_t((base + 5 * j) & 63); m[j] = uint8_t((63 - base - 3 * j) & 63); }
        pack_k4_scales(sc, m, q);
        unpack_k4_scales(q, sc2, m2);
        for (int j = 0; j < 8; ++j) { CHECK_EQ(int(sc2[j]), int(sc[j])); CHECK_EQ(int(m2[j]), int(m[j])); }
    }
    // And the other way: every bit of the 12 bytes carries one of the 96 bits, so any field a file holds comes
    // back unchanged (the repacked Q4_K layout keeps the scales unpacked and packs them again).
    std::mt19937 rng(12);
    for (int i = 0; i < 1000; ++i) {
        uint8_t q[12], q2[12], sc[8], m[8];
        for (uint8_t & v : q) v = uint8_t(rng());
        unpack_k4_scales(q, sc, m);
        pack_k4_scales(sc, m, q2);
        CHECK(std::memcmp(q, q2, sizeof q) == 0);
    }
}

TM_TEST("quant: q4_k hand-made block dequantizes exactly") {
    block_q4_k b{};
    const uint8_t sc[8] = {1, 63, 17, 32, 45, 2, 60, 33}, m[8] = {0, 5, 63, 31, 16, 48, 7, 62};
    pack_k4_scales(sc, m, b.scales);
    b.d = fp32_to_fp16(0.5f);
    b.dmin = fp32_to_fp16(0.25f);
    for (int e = 0; e < 256; ++e) set_k4_nibble(b.qs, e, (e * 7 + 3) % 16);
    float y[256];
    dequantize_row_q4_k(&b, y, 256);
    for (int e = 0; e < 256; ++e)
        CHECK_EQ(y[e], 0.5f * float(sc[e / 32]) * float((e * 7 + 3) % 16) - 0.25f * float(m[e / 32]));
}

TM_TEST("quant: q5_k hand-made block dequantizes exactly") {
    block_q5_k b{};
    const uint8_t sc[8] = {3, 9, 27, 63, 1, 50, 40, 30}, m[8] = {63, 0, 12, 24, 36, 48, 60, 6};
    pack_k4_scales(sc, m, b.scales);
    b.d = fp32_to_fp16(0.125f);
    b.dmin = fp32_to_fp16(1.0f);
    for (int e = 0; e < 256; ++e) {
        const int v = (e * 11 + 5) % 32;
        set_k4_nibble(b.qs, e, v & 15);
        const int c = e / 64, k = e % 64;
        if (v & 16) b.qh[k % 32] = uint8_t(b.qh[k % 32] | (1 << (2 * c + (k >= 32))));
    }
    float y[256];
    dequantize_row_q5_k(&b, y, 256);
    for (int e = 0; e < 256; ++e)
        CHECK_EQ(y[e], 0.125f * float(sc[e / 32]) * float((e * 11 + 5) % 32) - 1.0f * float(m[e / 32]));
}

TM_TEST("quant: q6_k hand-made block dequantizes exactly") {
    block_q6_k b{};
    for (int s = 0; s < 16; ++s) b.scales[s] = int8_t(s * 17 - 128);
    b.d = fp32_to_fp16(0.0625f);
    for (int e = 0; e < 256; ++e) {
        const int v = (e * 13 + 1) % 64;
        const int h = e / 128, k = e % 128, g = k / 32, l = k % 32;
        uint8_t & lo = b.ql[64 * h + l + 32 * (g & 1)];
        if (g < 2) lo = uint8_t((lo & 0xf0) | (v & 15));
        else lo = uint8_t((lo & 0x0f) | ((v & 15) << 4));
        b.qh[32 * h + l] = uint8_t(b.qh[32 * h + l] | ((v >> 4) << (2 * g)));
    }
    float y[256];
    dequantize_row_q6_k(&b, y, 256);
    for (int e = 0; e < 256; ++e)
        CHECK_EQ(y[e], 0.0625f * float(b.scales[e / 16]) * float((e * 13 + 1) % 64 - 32));
}

TM_TEST("quant: q8_0 and q4_0 quantizers stay within half a step") {
    std::mt19937 rng(7);
    std::normal_distribution<float> dist(0.0f, 2.0f);
    std::vector<float> x(256), y(256);
    for (auto & v : x) v = dist(rng);
    x[3] = 0.0f;
    std::vector<block_q8_0> q8(8);
    quantize_row_q8_0(x.data(), q8.data(), 256);
    dequantize_row_q8_0(q8.data(), y.data(), 256);
    for (int i = 0; i < 256; ++i) CHECK(std::fabs(y[i] - x[i]) <= fp16_to_fp32(q8[i / 32].d) * 0.5f + 1e-3f * std::fabs(x[i]));
    std::vector<block_q4_0> q4(8);
    quantize_row_q4_0(x.data(), q4.data(), 256);
    dequantize_row_q4_0(q4.data(), y.data(), 256);
    // The extreme maps to -8 exactly; +8 steps clamp to +7, so values near the opposite extreme may be
    // off by one full step, all others by half a step.
    for (int i = 0; i < 256; ++i) {
        const float d = std::fabs(fp16_to_fp32(q4[i / 32].d));
        const float bound = std::fabs(x[i]) > 7.0f * d ? d : 0.5f * d;
        CHECK(std::fabs(y[i] - x[i]) <= bound + 1e-3f * std::fabs(x[i]));
    }
    // amax = 127 makes the multiplier exactly 1: ties round to even, as llama.cpp's x86 path.
    std::vector<float> ties(32, 0.0f);
    ties[0] = 127.0f; ties[1] = 2.5f; ties[2] = 3.5f; ties[3] = -2.5f; ties[4] = 126.5f;
    quantize_row_q8_0(ties.data(), q8.data(), 32);
    CHECK_EQ(int(q8[0].qs[0]), 127);
    CHECK_EQ(int(q8[0].qs[1]), 2);
    CHECK_EQ(int(q8[0].qs[2]), 4);
    CHECK_EQ(int(q8[0].qs[3]), -2);
    CHECK_EQ(int(q8[0].qs[4]), 126);
    CHECK_EQ(q8[0].d, fp32_to_fp16(1.0f));
    // An all-zero block quantizes to zeros with scale 0.
    std::vector<float> zeros(32, 0.0f), back(32, 1.0f);
    quantize_row_q8_0(zeros.data(), q8.data(), 32);
    dequantize_row_q8_0(q8.data(), back.data(), 32);
    for (float v : back) CHECK_EQ(v, 0.0f);
}

TM_TEST("quant: q8_k quantizer maps the extreme to -127 and keeps block sums") {
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> dist(-3.0f, 3.0f);
    std::vector<float> x(512), y(512);
    for (auto & v : x) v = dist(rng);
    x[100] = 5.0f;   // block 0 extreme, positive -> -127 with a negative scale
    x[300] = -4.0f;  // block 1 extreme, negative -> -127 with a positive scale
    std::vector<block_q8_k> q(2);
    quantize_row_q8_k(x.data(), q.data(), 512);
    CHECK_EQ(int(q[0].qs[100]), -127);
    CHECK_EQ(int(q[1].qs[300 - 256]), -127);
    CHECK(q[0].d < 0.0f && q[1].d > 0.0f);
    for (int b = 0; b < 2; ++b)
        for (int g = 0; g < 16; ++g) {
            int sum = 0;
            for (int l = 0; l < 16; ++l) sum += q[b].qs[16 * g + l];
            CHECK_EQ(int(q[b].bsums[g]), sum);
        }
    dequantize_row_q8_k(q.data(), y.data(), 512);
    for (int i = 0; i < 512; ++i) CHECK(std::fabs(y[i] - x[i]) <= std::fabs(q[i / 256].d) * 0.5f * 1.0001f);
}

TM_TEST("quant: type geometry, activation types and checked row lengths") {
    CHECK_EQ(row_bytes(ggml_type::q8_0, 64), size_t(68));
    CHECK_EQ(row_bytes(ggml_type::q4_k, 512), size_t(288));
    CHECK_EQ(row_bytes(ggml_type::q6_k, 256), size_t(210));
    CHECK_EQ(row_bytes(ggml_type::f16, 10), size_t(20));
    CHECK(activation_type(ggml_type::q4_0) == ggml_type::q8_0);
    CHECK(activation_type(ggml_type::q5_k) == ggml_type::q8_k);
    CHECK(activation_type(ggml_type::bf16) == ggml_type::bf16);
    CHECK_THROWS_CODE(row_bytes(ggml_type::q4_k, 100), invalid_argument);
    // A type the kernels do not compute with is an error naming it.
    try {
        activation_type(ggml_type::iq2_xxs);
        CHECK(false);
    } catch (const error & e) {
        CHECK(e.code() == error_code::invalid_argument);
        CHECK(std::string(e.what()).find("iq2_xxs") != std::string::npos);
    }
    CHECK_THROWS_CODE(row_bytes(ggml_type::iq3_s, 256), invalid_argument);
    CHECK(!type_known(ggml_type::tq1_0));
    float y[32];
    block_q8_0 b{};
    b.d = fp32_to_fp16(1.0f);
    b.qs[5] = 9;
    dequantize_row(ggml_type::q8_0, &b, y, 32);
    CHECK_EQ(y[5], 9.0f);
}
