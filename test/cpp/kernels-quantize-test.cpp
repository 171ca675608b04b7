// Activation quantizers: every variant the machine runs (emulated AVX-512 included) writes bitwise what its
// quant:: reference writes, on random rows, exact rounding ties, all-zero blocks, F16-subnormal scales and huge
// values; Q8_K also on the largest magnitude appearing twice with both signs and at every vector position; F16
// rows on random bit patterns, every rounding boundary and the special values.
#include "check.h"
#include "kernel-levels.h"

#include "kernels/kernels.h"
#include "quant/fp16.h"
#include "quant/q8-0.h"
#include "quant/q8-1.h"
#include "quant/q8-k.h"

#include <cstring>
#include <random>
#include <vector>

using namespace tmill;
using namespace tmill::kernels;

namespace {

// 69 blocks of 32 in six kinds (block b is kind b % 6): whole groups of 8 and 16 blocks (the SIMD levels quantize
// that many together) and a rest of 5 or 13.
std::vector<float> q8_blocks() {
    const int64_t n_blocks = 69, n = n_blocks * 32;
    std::mt19937 rng(5);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::uniform_int_distribution<int> small(-127, 127);
    std::vector<float> x(static_cast<size_t>(n));
    for (int64_t b = 0; b < n_blocks; ++b) {
        float * xb = x.data() + b * 32;
        switch (b % 6) {
            case 0: for (int j = 0; j < 32; ++j) xb[j] = normal(rng); break;
            case 1:   // amax 127: id == 1, and every other value a .5 tie
                for (int j = 0; j < 32; ++j) xb[j] = float(small(rng)) + (j % 2 ? 0.5f : 0.0f);
                xb[0] = 127.0f;
                for (int j = 1; j < 32; ++j) xb[j] = xb[j] > 126.5f ? 126.5f : xb[j] < -126.5f ? -126.5f : xb[j];
                break;
            case 2:   // amax 254: id == 0.5, odd integers land on ties
                for (int j = 0; j < 32; ++j) xb[j] = float(2 * small(rng) + 1);
                xb[5] = -254.0f;
                break;
            case 3: for (int j = 0; j < 32; ++j) xb[j] = 0.0f; xb[7] = -0.0f; break;
            case 4: for (int j = 0; j < 32; ++j) xb[j] = normal(rng) * (b % 12 == 4 ? 1e-5f : 1e-8f); break;   // F16-subnormal or zero d
            default: for (int j = 0; j < 32; ++j) xb[j] = normal(rng) * 3e6f; break;   // d beyond F16 range
        }
    }
    return x;
}

// 24 blocks of 256 in eight kinds (block b is kind b % 8).
std::vector<float> q8_k_blocks() {
    const int64_t n_blocks = 24, n = n_blocks * 256;
    std::mt19937 rng(9);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::uniform_int_distribution<int> small(-126, 126), lane(0, 255);
    std::vector<float> x(static_cast<size_t>(n));
    for (int64_t b = 0; b < n_blocks; ++b) {
        float * xb = x.data() + b * 256;
        switch (b % 8) {
            case 0: for (int j = 0; j < 256; ++j) xb[j] = normal(rng); break;
            case 1:   // max -127 (iscale 1): every other value a .5 tie
                for (int j = 0; j < 256; ++j) xb[j] = float(small(rng)) + (j % 2 ? 0.5f : 0.0f);
                xb[lane(rng)] = -127.0f;
                break;
            case 2:   // max +127 (iscale -1), ties again
                for (int j = 0; j < 256; ++j) xb[j] = float(small(rng)) + (j % 2 ? -0.5f : 0.0f);
                xb[lane(rng)] = 127.0f;
                break;
            case 3: {   // the largest magnitude twice, signs opposite: the first decides the sign
                for (int j = 0; j < 256; ++j) xb[j] = normal(rng);
                const int a = lane(rng) % 128, c = 128 + lane(rng) % 128;
                xb[a] = b % 16 == 3 ? 9.0f : -9.0f;
                xb[c] = -xb[a];
                break;
            }
            case 4: for (int j = 0; j < 256; ++j) xb[j] = 0.0f; xb[77] = -0.0f; break;
            case 5: for (int j = 0; j < 256; ++j) xb[j] = normal(rng) * 1e-30f; break;
            case 6: for (int j = 0; j < 256; ++j) xb[j] = normal(rng) * 3e30f; break;
            default:   // the maximum in the block's last lane, or its first
                for (int j = 0; j < 256; ++j) xb[j] = normal(rng);
                xb[b % 16 == 7 ? 255 : 0] = -40.0f;
                break;
        }
    }
    return x;
}

// Runs `entry` of every level on x and compares each block with the reference's bytes.
template <typename Entry>
void check_levels(const char * what, const std::vector<float> & x, size_t block_bytes, int64_t block_elems, int kinds,
                  void (*reference)(const float *, void *, int64_t), Entry entry) {
    const int64_t n = int64_t(x.size()), n_blocks = n / block_elems;
    std::vector<uint8_t> want(size_t(n_blocks) * block_bytes);
    reference(x.data(), want.data(), n);
    for (const tm_test::kernel_level & l : tm_test::kernel_levels()) {
        std::vector<uint8_t> got(want.size(), 0xAA);
        (l.table.*entry)(x.data(), got.data(), n);
        int bad = 0;
        for (int64_t b = 0; b < n_blocks; ++b) {
            const size_t o = size_t(b) * block_bytes;
            if (std::memcmp(got.data() + o, want.data() + o, block_bytes) != 0 && ++bad <= 3)
                std::fprintf(stderr, "    %s %s: block %lld (kind %lld) differs\n", what, l.name, (long long)b, (long long)(b % kinds));
        }
        CHECK_EQ(bad, 0);
    }
}

} // namespace

TM_TEST("kernels: quantize_q8_0 variants match quant::quantize_row_q8_0 bitwise") {
    check_levels("q8_0", q8_blocks(), sizeof(quant::block_q8_0), 32, 6, quant::quantize_row_q8_0, &kernel_table::quantize_q8_0);
}

TM_TEST("kernels: quantize_q8_1 variants match quant::quantize_row_q8_1 bitwise") {
    check_levels("q8_1", q8_blocks(), sizeof(quant::block_q8_1), 32, 6, quant::quantize_row_q8_1, &kernel_table::quantize_q8_1);
}

TM_TEST("kernels: quantize_q8_k variants match quant::quantize_row_q8_k bitwise") {
    check_levels("q8_k", q8_k_blocks(), sizeof(quant::block_q8_k), 256, 8, quant::quantize_row_q8_k, &kernel_table::quantize_q8_k);
}

// F16 rows (the KV cache, F16 matmuls' activations): random F32 bit patterns over every exponent, the F16 rounding
// boundaries (exact ties to even and odd, one ulp either side), the subnormal range and its ties, the overflow
// threshold 65520 and its neighbours, zeros, infinities and NaNs (quiet, signalling, with payloads, alone in a
// vector and among finite values), at every position of a vector and in a tail.
TM_TEST("kernels: quantize_f16 variants match quant::quantize_row_f16 bitwise") {
    std::mt19937 rng(16);
    std::uniform_int_distribution<uint32_t> bits(0, 0xffffffffu);
    std::vector<float> x;
    const auto from_bits = [](uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; };
    const auto bits_of = [](float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; };
    for (int i = 0; i < 4000; ++i) x.push_back(from_bits(bits(rng)));
    for (uint32_t e = 100; e < 145; ++e)   // F32 exponents from below the F16 subnormals to past its range
        for (uint32_t m : {0x0000u, 0x1000u, 0x3000u, 0x0fffu, 0x1001u, 0x2fffu, 0x3001u, 0x7fffffu})
            for (uint32_t sign : {0u, 0x80000000u}) x.push_back(from_bits(sign | e << 23 | m));
    for (float v : {65504.0f, 65519.99f, 65520.0f, 65520.01f, 65536.0f, 5.9604645e-8f, 2.9802322e-8f, 8.940697e-8f,
                    6.1035156e-5f, 6.0975552e-5f, 0.0f, -0.0f})
        for (float s : {1.0f, -1.0f}) x.push_back(v * s);
    for (uint32_t special : {0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc00001u, 0x7f800001u, 0x7fbfffffu, 0x7fc12345u})
        x.push_back(from_bits(special));
    for (int k = 0; k < 33; ++k) x.push_back(float(k) * 0.37f);   // a tail past every vector width
    const int64_t n = int64_t(x.size());
    std::vector<uint16_t> want(static_cast<size_t>(n));
    quant::quantize_row_f16(x.data(), want.data(), n);
    for (const tm_test::kernel_level & l : tm_test::kernel_levels()) {
        std::vector<uint16_t> got(static_cast<size_t>(n), 0xAAAA);
        l.table.quantize_f16(x.data(), got.data(), n);
        int bad = 0;
        for (int64_t i = 0; i < n; ++i)
            if (got[size_t(i)] != want[size_t(i)] && ++bad <= 3)
                std::fprintf(stderr, "    f16 %s: element %lld (%08x) gives %04x, the reference %04x\n", l.name, (long long)i,
                             unsigned(bits_of(x[size_t(i)])), got[size_t(i)], want[size_t(i)]);
        CHECK_EQ(bad, 0);
    }
}
