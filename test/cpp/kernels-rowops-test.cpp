// Row operations of every table level the machine runs, against straightforward double formulas;
// the thread pool.
#include "check.h"
#include "kernel-levels.h"

#include "base/cpu-features.h"
#include "base/error.h"
#include "base/thread-pool.h"
#include "kernels/kernels.h"
#include "quant/fp16.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

using namespace tmill;
using namespace tmill::kernels;

namespace {

std::vector<kernel_table> tables() {
    std::vector<kernel_table> out;
    for (const tm_test::kernel_level & l : tm_test::kernel_levels()) out.push_back(l.table);
    return out;
}

std::vector<float> random_vec(int64_t n, float lo, float hi, std::mt19937 & rng) {
    std::uniform_real_distribution<float> d(lo, hi);
    std::vector<float> v(static_cast<size_t>(n));
    for (auto & x : v) x = d(rng);
    return v;
}

const int64_t lengths[] = {1, 7, 8, 15, 16, 17, 33, 100, 2048};

} // namespace

TM_TEST("kernels: rmsnorm and add match their formulas") {
    std::mt19937 rng(5);
    for (const kernel_table & k : tables()) {
        for (int64_t n : lengths) {
            const auto x = random_vec(n, -3, 3, rng), w = random_vec(n, -2, 2, rng), b = random_vec(n, -1, 1, rng);
            std::vector<float> y(static_cast<size_t>(n));
            k.rmsnorm(x.data(), w.data(), y.data(), n, 1e-5f);
            double ss = 0.0;
            for (float v : x) ss += double(v) * v;
            const double scale = 1.0 / std::sqrt(ss / double(n) + 1e-5);
            for (int64_t i = 0; i < n; ++i) CHECK_NEAR(y[i], x[i] * scale * w[i], 1e-5 * std::fabs(x[i] * scale * w[i]) + 1e-6);
            std::vector<float> in_place = x;
            k.rmsnorm(in_place.data(), w.data(), in_place.data(), n, 1e-5f);
            for (int64_t i = 0; i < n; ++i) CHECK_EQ(in_place[i], y[i]);

            k.add(x.data(), b.data(), y.data(), n);
            for (int64_t i = 0; i < n; ++i) CHECK_EQ(y[i], x[i] + b[i]);
        }
    }
}

TM_TEST("kernels: silu_mul matches its formula") {
    std::mt19937 rng(6);
    for (const kernel_table & k : tables()) {
        for (int64_t n : lengths) {
            const auto a = random_vec(n, -30, 30, rng), b = random_vec(n, -2, 2, rng);
            std::vector<float> y(static_cast<size_t>(n));
            k.silu_mul(a.data(), b.data(), y.data(), n);
            for (int64_t i = 0; i < n; ++i) {
                const double want = double(a[i]) / (1.0 + std::exp(-double(a[i]))) * b[i];
                CHECK_NEAR(y[i], want, 2e-6 * std::fabs(want) + 1e-30);
            }
        }
    }
}

TM_TEST("kernels: rope rotates normal and neox pairs by the ggml angles, with and without frequency factors") {
    std::mt19937 rng(8);
    const int64_t n_rows = 3, n_head = 2, head_dim = 16, n_rot = 12;  // dims 12..15 pass through
    const int32_t pos[n_rows] = {0, 7, 300};
    const float base = 10000.0f, fscale = 0.5f;
    const float factors[n_rot / 2] = {1.0f, 1.0f, 2.5f, 8.0f, 8.0f, 3.25f};   // Llama 3's shape: 1 .. factor
    for (const kernel_table & k : tables()) {
        for (const float * ff : {static_cast<const float *>(nullptr), factors}) {
            for (rope_style style : {rope_style::normal, rope_style::neox}) {
                const auto x = random_vec(n_rows * n_head * head_dim, -1, 1, rng);
                std::vector<float> y = x;
                k.rope(y.data(), n_rows, n_head, head_dim, n_rot, pos, base, fscale, ff, style);
                for (int64_t r = 0; r < n_rows; ++r) {
                    // The contract: theta_i = freq_scale * (pos * base^(-2/n_rot) ^ i / ff_i), the power taken by
                    // repeated float multiplication as ggml does.
                    const float step = std::pow(base, -2.0f / float(n_rot));
                    float theta = float(pos[r]);
                    for (int64_t i = 0; i < n_rot / 2; ++i) {
                        const float f = ff ? ff[i] : 1.0f;
                        const double angle = double(fscale * (theta / f));
                        const double closed = double(fscale) * pos[r] * std::pow(double(base), -2.0 * i / n_rot) / f;
                        CHECK_NEAR(angle, closed, 1e-5 * std::fabs(closed) + 1e-9);
                        for (int64_t h = 0; h < n_head; ++h) {
                            const float * v = x.data() + (r * n_head + h) * head_dim;
                            const float * o = y.data() + (r * n_head + h) * head_dim;
                            const int64_t i0 = style == rope_style::neox ? i : 2 * i;
                            const int64_t i1 = style == rope_style::neox ? i + n_rot / 2 : 2 * i + 1;
                            CHECK_NEAR(o[i0], v[i0] * std::cos(angle) - v[i1] * std::sin(angle), 1e-5);
                            CHECK_NEAR(o[i1], v[i0] * std::sin(angle) + v[i1] * std::cos(angle), 1e-5);
                        }
                        theta *= step;
                    }
                    for (int64_t h = 0; h < n_head; ++h)
                        for (int64_t d = n_rot; d < head_dim; ++d)
                            CHECK_EQ(y[size_t((r * n_head + h) * head_dim + d)], x[size_t((r * n_head + h) * head_dim + d)]);
                }
            }
        }
        std::vector<float> z(16);
        CHECK_THROWS_CODE(k.rope(z.data(), 1, 1, 16, 7, pos, base, 1.0f, nullptr, rope_style::normal), invalid_argument);
    }
}

// llama.cpp's rotate_pairs as its FMA builds compile it (ggml_rope_ext of the zen4 build, measured on
// SmolLM2's layer-28 queries): x0' = fma(x0, c, -(x1*s)), x1' = fma(x0, s, x1*c). Rounding both products
// instead differs in the last bit on about a sixth of the elements; the F16 query/key of flash attention
// hides most such bits, but not all, and SmolLM2's logits then parted from llama.cpp's by up to 0.36.
TM_TEST("kernels: rope rounds as ggml's FMA build, bit for bit, on every level") {
    std::mt19937 rng(28);
    const int64_t n_rows = 4, n_head = 3, head_dim = 64, n_rot = 64;
    const int32_t pos[n_rows] = {1, 2, 17, 1000};
    const float base = 100000.0f;
    int64_t unfused_differs = 0;
    for (const kernel_table & k : tables()) {
        for (rope_style style : {rope_style::normal, rope_style::neox}) {
            const auto x = random_vec(n_rows * n_head * head_dim, -8, 8, rng);
            std::vector<float> y = x;
            k.rope(y.data(), n_rows, n_head, head_dim, n_rot, pos, base, 1.0f, nullptr, style);
            const float step = std::pow(base, -2.0f / float(n_rot));
            for (int64_t r = 0; r < n_rows; ++r) {
                float theta = float(pos[r]);
                for (int64_t i = 0; i < n_rot / 2; ++i) {
                    const float c = std::cos(theta), s = std::sin(theta);
                    for (int64_t h = 0; h < n_head; ++h) {
                        const float * v = x.data() + (r * n_head + h) * head_dim;
                        const float * o = y.data() + (r * n_head + h) * head_dim;
                        const int64_t i0 = style == rope_style::neox ? i : 2 * i;
                        const int64_t i1 = style == rope_style::neox ? i + n_rot / 2 : 2 * i + 1;
                        const float x0 = v[i0], x1 = v[i1];
                        const float p1 = x1 * s, p2 = x1 * c;
                        CHECK_EQ(o[i0], std::fma(x0, c, -p1));
                        CHECK_EQ(o[i1], std::fma(x0, s, p2));
                        volatile float q0 = x0 * c, q1 = x0 * s;   // volatile: rounded, never contracted
                        unfused_differs += (q0 - p1 != o[i0]) + (q1 + p2 != o[i1]);
                    }
                    theta *= step;
                }
            }
        }
    }
    CHECK(unfused_differs > 0);   // the data exercises the rounding this test is about
}

// Every level's rope is the reference's bit for bit: the same angles (the SIMD levels call the reference's
// cache helpers) and the same rounded products, whatever the vector width leaves as a tail.
TM_TEST("kernels: rope equals the reference bit for bit on every level") {
    std::mt19937 rng(9);
    std::uniform_int_distribution<int32_t> position(0, 200000);
    const kernel_table ref = kernels_for(isa_level::baseline);
    const int64_t n_rows = 7, n_head = 3;
    int32_t pos[n_rows];
    struct shape { int64_t head_dim, n_rot; };
    const shape shapes[] = {{8, 8}, {8, 6}, {8, 2}, {64, 64}, {64, 32}, {64, 18}, {80, 80}, {80, 40},
                            {80, 34}, {128, 128}, {128, 64}, {128, 126}, {128, 0}, {2048, 1024}};
    const float bases[] = {10000.0f, 500000.0f, 1000000.0f};
    const float scales[] = {1.0f, 0.25f, 1.0f / 3.0f};
    int case_no = 0;
    for (const shape & sh : shapes) {
        for (rope_style style : {rope_style::normal, rope_style::neox}) {
            const float base = bases[case_no % 3], fscale = scales[(case_no / 3) % 3];
            ++case_no;
            for (int64_t r = 0; r < n_rows; ++r) pos[r] = r < 2 ? int32_t(r) : position(rng);
            const auto x = random_vec(n_rows * n_head * sh.head_dim, -4, 4, rng);
            // Every other case with Llama 3 style frequency factors (1 .. 8).
            const auto factors = random_vec(std::max<int64_t>(sh.n_rot / 2, 1), 1, 8, rng);
            const float * ff = case_no % 2 ? factors.data() : nullptr;
            std::vector<float> want = x;
            ref.rope(want.data(), n_rows, n_head, sh.head_dim, sh.n_rot, pos, base, fscale, ff, style);
            for (const kernel_table & k : tables()) {
                std::vector<float> got = x;
                k.rope(got.data(), n_rows, n_head, sh.head_dim, sh.n_rot, pos, base, fscale, ff, style);
                int bad = 0;
                for (size_t i = 0; i < got.size(); ++i) bad += std::memcmp(&got[i], &want[i], sizeof(float)) != 0;
                if (bad) std::fprintf(stderr, "    %s: head_dim %lld n_rot %lld style %d: %d values differ\n", k.isa,
                                      (long long)sh.head_dim, (long long)sh.n_rot, int(style), bad);
                CHECK_EQ(bad, 0);
            }
        }
    }
    // A bad n_rot fails with invalid_argument on every level, before touching x.
    std::vector<float> z(2048);
    for (const kernel_table & k : tables()) {
        CHECK_THROWS_CODE(k.rope(z.data(), 1, 1, 16, 18, pos, 10000.0f, 1.0f, nullptr, rope_style::neox), invalid_argument);
        CHECK_THROWS_CODE(k.rope(z.data(), 1, 1, 16, -2, pos, 10000.0f, 1.0f, nullptr, rope_style::normal), invalid_argument);
        CHECK_THROWS_CODE(k.rope(z.data(), 1, 1, 2048, 1026, pos, 10000.0f, 1.0f, nullptr, rope_style::normal), invalid_argument);
    }
}

TM_TEST("thread_pool: every task runs exactly once, job after job") {
    for (int n_threads : {1, 2, 3, 5}) {
        thread_pool pool(n_threads);
        CHECK_EQ(pool.n_threads(), n_threads);
        std::vector<std::atomic<int>> hits(97);
        for (int job = 0; job < 300; ++job) {
            const int64_t n = job % 97 + 1;
            for (int64_t i = 0; i < n; ++i) hits[size_t(i)].store(0);
            pool.parallel_for(n, [&](int64_t i) { hits[size_t(i)].fetch_add(1); });
            int wrong = 0;
            for (int64_t i = 0; i < n; ++i) wrong += hits[size_t(i)].load() != 1;
            CHECK_EQ(wrong, 0);
        }
        int calls = 0;
        pool.parallel_for(0, [&](int64_t) { ++calls; });
        CHECK_EQ(calls, 0);
    }
    CHECK_THROWS_CODE(thread_pool(0), invalid_argument);
}

// llama.cpp's activations: rmsnorm sums squares in double on every level (so all levels agree bit for
// bit), and silu's vectorised exp saturates like ggml's (0 far below, inf far above, no NaN).
TM_TEST("kernels: rmsnorm is identical on every level; silu_mul saturates cleanly at extreme inputs") {
    std::mt19937 rng(12);
    const kernel_table ref = kernels_for(isa_level::baseline);
    for (int64_t n : {int64_t(17), int64_t(64), int64_t(172), int64_t(2048)}) {
        const auto x = random_vec(n, -3, 3, rng), w = random_vec(n, -2, 2, rng);
        std::vector<float> want(static_cast<size_t>(n)), got(static_cast<size_t>(n));
        ref.rmsnorm(x.data(), w.data(), want.data(), n, 1e-5f);
        for (const kernel_table & k : tables()) {
            k.rmsnorm(x.data(), w.data(), got.data(), n, 1e-5f);
            for (int64_t i = 0; i < n; ++i) CHECK_EQ(got[i], want[i]);
        }
    }
    std::vector<float> a = {-200, -150, -100, -90, -88, -50, -1, 0, 1, 50, 88, 90, 100, 150, 200, 1000};
    a.insert(a.end(), a.begin(), a.end());   // 32 values: full vector groups on every level, plus a tail below
    a.push_back(-120.0f);
    const std::vector<float> b(a.size(), 1.5f);
    std::vector<float> y(a.size());
    for (const kernel_table & k : tables()) {
        k.silu_mul(a.data(), b.data(), y.data(), int64_t(a.size()));
        for (size_t i = 0; i < a.size(); ++i) {
            CHECK(std::isfinite(y[i]));
            const double want = double(a[i]) / (1.0 + std::exp(-double(a[i]))) * 1.5;
            CHECK_NEAR(y[i], want, 2e-6 * std::fabs(want) + 1e-30);
        }
    }
}
