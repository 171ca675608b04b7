// vec-math against libm and plain loops, on lengths that exercise the SIMD body and the scalar tail.
#include "check.h"
#include "sample-test-util.h"

#include "sample/vec-math.h"

#include <cmath>
#include <random>

using namespace tm_test::sample_util;

TM_TEST("sample: exp_approx and sum_exp match libm") {
    double worst = 0;
    for (float x = -87.0f; x <= 0.0f; x += 0.001f) {
        const double ref = std::exp((double)x);
        worst = std::max(worst, std::fabs(tmill::exp_approx(x) - ref) / ref);
    }
    CHECK(worst < 3e-7);
    CHECK_EQ(tmill::exp_approx(ninf), 0.0f);
    CHECK_EQ(tmill::exp_approx(0.0f), 1.0f);
    CHECK_EQ(tmill::exp_approx(-200.0f), 0.0f);

    std::mt19937 gen(5);
    std::normal_distribution<float> nd(0.0f, 4.0f);
    for (int32_t n : {1, 3, 4, 7, 255, 256, 257, 1003}) {
        std::vector<float> row(n), out(n);
        for (auto & v : row) v = nd(gen);
        row[0] = ninf;
        const float mx = 20.0f;
        double ref = 0;
        for (float v : row) ref += std::exp((double)v - mx);
        const double got = tmill::sum_exp(row.data(), n, mx, out.data());
        CHECK_NEAR(got / (ref > 0 ? ref : 1), ref > 0 ? 1.0 : 0.0, 1e-6);
        CHECK_EQ(out[0], 0.0f);
        // compare with the float difference the sampler also forms (row[i] - mx rounds to float)
        for (int32_t i = 1; i < n; ++i) CHECK_NEAR(out[i] / std::exp((double)(row[i] - mx)), 1.0, 3e-7);
    }
}

TM_TEST("sample: row_max, row_argmax, mask_below, count_at_least") {
    for (int32_t n : {1, 5, 8, 9, 1001}) {
        std::vector<float> row(n);
        for (int32_t i = 0; i < n; ++i) row[i] = (float)((i * 7919) % 101) - 50.0f;
        float mx = row[0];
        int32_t arg = 0, ge = 0;
        for (int32_t i = 0; i < n; ++i) if (row[i] > mx) { mx = row[i]; arg = i; }
        for (float v : row) ge += v >= 10.0f;
        CHECK_EQ(tmill::row_max(row.data(), n), mx);
        CHECK_EQ(tmill::row_argmax(row.data(), n), arg);
        CHECK_EQ(tmill::count_at_least(row.data(), n, 10.0f), ge);
        std::vector<float> masked(row);
        tmill::mask_below(masked.data(), n, 10.0f);
        for (int32_t i = 0; i < n; ++i) CHECK_EQ(masked[i], row[i] < 10.0f ? ninf : row[i]);
    }
    std::vector<float> all_masked(9, ninf);
    CHECK_EQ(tmill::row_max(all_masked.data(), 9), ninf);
    std::vector<float> ties = {1, 3, 2, 3, 3};
    CHECK_EQ(tmill::row_argmax(ties.data(), 5), 1);
}
