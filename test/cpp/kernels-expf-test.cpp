// expf_glibc (kernels/simd/expf-glibc.h), the attention softmax's vectorised e^x: bit for bit the libm expf
// the reference and llama.cpp call, on a stride through every float bit pattern and exhaustively around each
// special-case threshold, for each level this CPU runs (test/cpp/expf-probe-<level>.cpp compile it for the
// level); a level the CPU lacks is reported as not run (the emulated level's attention, compared bit for bit
// against attend_f16's scalar expf calls, covers it there).
#include "check.h"
#include "expf-probe.h"

#include "base/cpu-features.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>


namespace {

float from_bits(uint32_t b) {
    float f;
    std::memcpy(&f, &b, sizeof f);
    return f;
}
uint32_t bits_of(float f) {
    uint32_t b;
    std::memcpy(&b, &f, sizeof b);
    return b;
}

// The inputs: every 251st bit pattern, and 8192 patterns either side of each threshold of glibc's special
// cases (overflow, the "may underflow" and underflow bounds, the |x| >= 88 test), of ±0 and of ±inf; the
// count is padded to a multiple of 16 lanes with zeros.
std::vector<float> inputs() {
    std::vector<float> x;
    for (uint64_t b = 0; b < (uint64_t(1) << 32); b += 251) x.push_back(from_bits(uint32_t(b)));
    for (float t : {0x1.62e42ep6f, -0x1.9d1d9ep6f, -0x1.9fe368p6f, 88.0f, -88.0f, 0.0f, -0.0f, INFINITY, -INFINITY})
        for (int d = -8192; d <= 8192; ++d) x.push_back(from_bits(uint32_t(int64_t(bits_of(t)) + d)));
    while (x.size() % 16) x.push_back(0.0f);
    return x;
}

void check_level(const char * name, void (*expf_rows)(const float *, float *, size_t), const std::vector<float> & x) {
    std::vector<float> y(x.size());
    expf_rows(x.data(), y.data(), x.size());
    size_t differ = 0;
    for (size_t i = 0; i < x.size(); ++i) {
        const float want = std::exp(x[i]);
        const bool same = std::isnan(want) ? std::isnan(y[i]) : bits_of(want) == bits_of(y[i]);
        if (!same && differ++ < 5) std::printf("  %s: expf(%a) = %a, expf_glibc %a\n", name, x[i], want, y[i]);
    }
    std::printf("  expf_glibc %s: %zu inputs, %zu differ from libm\n", name, x.size(), differ);
    CHECK_EQ(differ, size_t(0));
}

} // namespace

TM_TEST("kernels: expf_glibc returns libm's expf bit for bit on every level the CPU runs") {
    const std::vector<float> x = inputs();
    const tmill::cpu_features & f = tmill::cpu_features_get();
    if (f.avx2) check_level("avx2", tm_test::expf_rows_avx2, x);
    else std::printf("  expf_glibc avx2: not run (the CPU lacks AVX2 or TOKENMILL_ISA caps it)\n");
    if (f.avx512) check_level("avx512", tm_test::expf_rows_avx512, x);
    else std::printf("  expf_glibc avx512: not run (the CPU lacks AVX-512 or TOKENMILL_ISA caps it)\n");
}
