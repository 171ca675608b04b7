// Activation quantizer: every variant the machine runs writes bitwise what quant::quantize_row_q8_0
// writes, on random rows, exact rounding ties, all-zero blocks, F16-subnormal scales and huge values.
#include "check.h"
#include "kernel-levels.h"

#include "kernels/kernels.h"
#include "quant/q8-0.h"

#include <cstring>
#include <random>
#include <vector>

using namespace tmill;
using namespace tmill::kernels;

TM_TEST("kernels: quantize_q8_0 variants match quant::quantize_row_q8_0 bitwise") {
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
    std::vector<uint8_t> want(size_t(n_blocks) * sizeof(quant::block_q8_0));
    quant::quantize_row_q8_0(x.data(), want.data(), n);

    for (const tm_test::kernel_level & l : tm_test::kernel_levels()) {
        std::vector<uint8_t> got(want.size(), 0xAA);
        l.table.quantize_q8_0(x.data(), got.data(), n);
        int bad = 0;
        for (int64_t b = 0; b < n_blocks; ++b) {
            const size_t o = size_t(b) * sizeof(quant::block_q8_0);
            if (std::memcmp(got.data() + o, want.data() + o, sizeof(quant::block_q8_0)) != 0 && ++bad <= 3)
                std::fprintf(stderr, "    %s: block %lld (kind %lld) differs\n", l.name, (long long)b, (long long)(b % 6));
        }
        CHECK_EQ(bad, 0);
    }
}
