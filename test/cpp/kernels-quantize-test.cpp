// Activation quantizers: every variant the machine runs (emulated AVX-512 included) writes bitwise what its
// quant:: reference writes, on random rows, exact rounding ties, all-zero blocks, F16-subnormal scales and huge
// values; Q8_K also on the largest magnitude appearing twice with both signs and at every vector position.
#include "check.h"
#include "kernel-levels.h"

#include "kernels/kernels.h"
#include "quant/q8-0.h"
#include "quant/q8-1.h"
#include "quant/q8-k.h"

#include <cstring>
#include <random>
#include <vector>

using namespace tmill;
using namespace tmill::kernels;

namespace {

// 64 blocks of 32 in six kinds (block b is kind b % 6).
std::vector<float> q8_blocks() {
    const int64_t n_blocks = 64, n = n_blocks * 32;
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
