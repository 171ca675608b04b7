// attend_f16 (paged causal attention over an F16 cache): the reference against the per-key scalar formula
// it replaced (bit for bit) and a double-precision softmax, every SIMD variant the machine runs against
// the reference, independence from the physical block layout and from scratch contents, preconditions.
// attend_f16_heads (a group of query heads over one KV head): bit for bit its level's attend_f16 per head.
#include "check.h"
#include "kernel-levels.h"

#include "base/cpu-features.h"
#include "base/error.h"
#include "kernels/kernels.h"
#include "quant/fp16.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <string>
#include <vector>

using namespace tmill;
using namespace tmill::kernels;

namespace {

constexpr int32_t k_block = 16;
constexpr int64_t k_n_kv_head = 3;   // the kernel sees head 1 only: bases and strides must be honoured

// A paged cache (n_blocks, k_block, k_n_kv_head, head_dim) F16 for keys and values, with a shuffled block
// table so logical neighbours live in non-contiguous physical blocks.
struct paged_cache {
    int64_t head_dim = 0;
    int32_t n_ctx = 0;
    std::vector<uint16_t> k, v;        // (n_blocks, k_block, k_n_kv_head, head_dim) F16
    std::vector<int32_t> table;        // (ceil(n_ctx / k_block)) physical block of each logical block
    std::vector<float> q;              // (head_dim)
    size_t slot_stride() const { return size_t(k_n_kv_head * head_dim); }
    size_t block_stride() const { return size_t(k_block) * slot_stride(); }
    const uint16_t * k_base() const { return k.data() + head_dim; }
    const uint16_t * v_base() const { return v.data() + head_dim; }
    const uint16_t * k_at(int32_t j) const { return k_base() + table[j / k_block] * block_stride() + (j % k_block) * slot_stride(); }
    const uint16_t * v_at(int32_t j) const { return v_base() + table[j / k_block] * block_stride() + (j % k_block) * slot_stride(); }
};

// q_mag sets how peaked the softmax is (scores have standard deviation ~q_mag / 3); `rising` adds a ramp
// to the keys along q so the running maximum changes often (many accumulator rescales).
paged_cache make_cache(int64_t head_dim, int32_t n_ctx, float q_mag, bool rising, std::mt19937 & rng) {
    paged_cache c;
    c.head_dim = head_dim;
    c.n_ctx = n_ctx;
    const int32_t n_logical = (n_ctx + k_block - 1) / k_block;
    const int32_t n_blocks = n_logical + 3;   // spare blocks hold garbage the kernel must not read
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    c.q.resize(size_t(head_dim));
    for (auto & x : c.q) x = u(rng) * q_mag;
    const size_t n = size_t(n_blocks) * k_block * k_n_kv_head * head_dim;
    c.k.resize(n);
    c.v.resize(n);
    for (auto & x : c.k) x = quant::fp32_to_fp16(u(rng));
    for (auto & x : c.v) x = quant::fp32_to_fp16(u(rng));
    std::vector<int32_t> perm(static_cast<size_t>(n_blocks));
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    c.table.assign(perm.begin(), perm.begin() + n_logical);
    if (rising) {
        for (int32_t j = 0; j < n_ctx; ++j) {
            uint16_t * k = const_cast<uint16_t *>(c.k_at(j));
            const float ramp = 2.0f * float(j) / float(n_ctx);
            for (int64_t i = 0; i < head_dim; ++i)
                k[i] = quant::fp32_to_fp16(0.5f * quant::fp16_to_fp32(k[i]) + (c.q[i] > 0 ? ramp : -ramp) / q_mag);
        }
    }
    return c;
}

std::vector<float> run(const kernel_table & kt, const paged_cache & c, float fill = 0.0f, float softcap = 0.0f) {
    std::vector<float> out(size_t(c.head_dim)), scratch(size_t(2 * c.head_dim), fill);
    kt.attend_f16(c.q.data(), c.head_dim, 1.0f / std::sqrt(float(c.head_dim)), softcap, c.n_ctx, c.table.data(), k_block,
                  c.k_base(), c.v_base(), c.block_stride(), c.slot_stride(), out.data(), scratch.data());
    return out;
}

float round_f16(float x) { return quant::fp16_to_fp32(quant::fp32_to_fp16(x)); }

// The per-key scalar loop llama_forward::attention ran before the kernel existed; the reference must
// reproduce it bit for bit.
std::vector<float> per_key_formula(const paged_cache & c) {
    const int64_t hd = c.head_dim;
    const float scale = 1.0f / std::sqrt(float(hd));
    std::vector<float> acc(static_cast<size_t>(hd), 0.0f), q16(static_cast<size_t>(hd));
    for (int64_t i = 0; i < hd; ++i) q16[i] = round_f16(c.q[i]);
    float m = -INFINITY, sum = 0.0f;
    for (int32_t j = 0; j < c.n_ctx; ++j) {
        const uint16_t * k = c.k_at(j);
        const uint16_t * v = c.v_at(j);
        float dot = 0.0f;
        for (int64_t i = 0; i < hd; ++i) dot += q16[i] * quant::fp16_to_fp32(k[i]);
        const float sc = dot * scale;
        float ms = 1.0f, vs;
        if (sc > m) {
            const float m_old = m;
            m = sc;
            ms = j == 0 ? 0.0f : std::exp(m_old - m);
            for (int64_t i = 0; i < hd; ++i) acc[i] = round_f16(acc[i] * ms);
            vs = 1.0f;
        } else {
            vs = std::exp(sc - m);
        }
        for (int64_t i = 0; i < hd; ++i) acc[i] = round_f16(acc[i] + quant::fp16_to_fp32(v[i]) * vs);
        sum = sum * ms + vs;
    }
    const float inv = 1.0f / sum;   // scaled by 1/S, as ggml does
    for (auto & a : acc) a *= inv;
    return acc;
}

// Plain softmax attention in double on the F16 keys/values and the unrounded query.
std::vector<double> exact(const paged_cache & c) {
    const int64_t hd = c.head_dim;
    std::vector<double> s(size_t(c.n_ctx)), out(size_t(hd), 0.0);
    double mx = -INFINITY;
    for (int32_t j = 0; j < c.n_ctx; ++j) {
        double d = 0.0;
        for (int64_t i = 0; i < hd; ++i) d += double(c.q[i]) * quant::fp16_to_fp32(c.k_at(j)[i]);
        s[j] = d / std::sqrt(double(hd));
        mx = std::max(mx, s[j]);
    }
    double z = 0.0;
    for (int32_t j = 0; j < c.n_ctx; ++j) z += std::exp(s[j] - mx);
    for (int32_t j = 0; j < c.n_ctx; ++j) {
        const double p = std::exp(s[j] - mx) / z;
        for (int64_t i = 0; i < hd; ++i) out[i] += p * quant::fp16_to_fp32(c.v_at(j)[i]);
    }
    return out;
}

struct variant {
    const char * name;
    kernel_table t;
};

// Every level but the reference (tm_test::kernel_levels(), emulated ones included).
std::vector<variant> simd_variants() {
    std::vector<variant> out;
    for (const tm_test::kernel_level & l : tm_test::kernel_levels())
        if (std::string(l.name) != "baseline") out.push_back({l.name, l.table});
    return out;
}

const int64_t head_dims[] = {8, 20, 64, 96, 128};
const int32_t contexts[] = {1, 2, 15, 16, 17, 31, 33, 100, 257, 1000};
const float q_mags[] = {1.0f, 8.0f, 40.0f};

} // namespace

TM_TEST("kernels: attend_f16 reference reproduces the per-key scalar formula bit for bit") {
    std::mt19937 rng(11);
    const kernel_table ref = kernels_for(isa_level::baseline);
    for (int64_t hd : head_dims)
        for (int32_t n_ctx : contexts)
            for (float qm : q_mags)
                for (bool rising : {false, true}) {
                    const paged_cache c = make_cache(hd, n_ctx, qm, rising, rng);
                    const auto got = run(ref, c), want = per_key_formula(c);
                    for (int64_t i = 0; i < hd; ++i) CHECK_EQ(got[i], want[i]);
                }
}

// The F16 query (with q_mag 40 the scores span ~±100, so rounding q moves the probabilities) and the F16
// accumulator over up to 1000 keys drift from the exact result: bounded by 1e-2 of max |v| (= 1); seen 3.6e-3.
TM_TEST("kernels: attend_f16 of every level approximates double-precision softmax attention") {
    std::mt19937 rng(12);
    std::vector<variant> all = simd_variants();
    all.insert(all.begin(), variant{"baseline", kernels_for(isa_level::baseline)});
    double worst = 0.0;
    for (const variant & var : all)
        for (int64_t hd : head_dims)
            for (int32_t n_ctx : contexts)
                for (float qm : q_mags)
                    for (bool rising : {false, true}) {
                        const paged_cache c = make_cache(hd, n_ctx, qm, rising, rng);
                        const auto got = run(var.t, c);
                        const auto want = exact(c);
                        for (int64_t i = 0; i < hd; ++i) {
                            CHECK_NEAR(got[i], want[i], 1e-2);
                            worst = std::max(worst, std::fabs(got[i] - want[i]));
                        }
                    }
    std::printf("  attend_f16 vs double softmax: max |diff| %.3g\n", worst);
}

// SIMD variants use FMA and ggml's lane order for the dot products, so the F16 accumulator may round
// differently from the reference's: allowed 1e-3 of max |v| (2 F16 ulps of a unit value; seen: 4.1e-4),
// and on average far less (checked: mean |diff| < 1e-5; seen: ~4e-7). With soft-capping at 30 (gemma2
// caps at 50; q_mag 40 gives scores up to ~±100, so the cap bites) as without.
TM_TEST("kernels: attend_f16 SIMD variants match the reference") {
    std::mt19937 rng(13);
    const kernel_table ref = kernels_for(isa_level::baseline);
    for (const variant & var : simd_variants()) {
        double total = 0.0, worst = 0.0;
        int64_t count = 0;
        for (int64_t hd : head_dims)
            for (int32_t n_ctx : contexts)
                for (float qm : q_mags)
                    for (bool rising : {false, true}) {
                        const paged_cache c = make_cache(hd, n_ctx, qm, rising, rng);
                        const float cap = (n_ctx + int32_t(rising)) % 2 == 0 ? 30.0f : 0.0f;
                        const auto got = run(var.t, c, 0.0f, cap), want = run(ref, c, 0.0f, cap);
                        for (int64_t i = 0; i < hd; ++i) {
                            const double d = std::fabs(double(got[i]) - want[i]);
                            CHECK_NEAR(got[i], want[i], 1e-3);
                            total += d;
                            worst = std::max(worst, d);
                            ++count;
                        }
                    }
        CHECK(total / double(count) < 1e-5);
        std::printf("  attend_f16 %s vs reference: max |diff| %.3g, mean %.3g\n", var.name, worst, total / double(count));
    }
}

TM_TEST("kernels: attend_f16 depends only on the logical sequence, not on block placement or scratch") {
    std::mt19937 rng(14);
    std::vector<variant> all = simd_variants();
    all.insert(all.begin(), variant{"baseline", kernels_for(isa_level::baseline)});
    for (int64_t hd : {int64_t(8), int64_t(64), int64_t(128)}) {
        const paged_cache a = make_cache(hd, 300, 8.0f, false, rng);
        // The same logical keys and values in a different physical arrangement.
        paged_cache b = a;
        std::vector<int32_t> perm(b.table.size());
        std::iota(perm.begin(), perm.end(), 0);
        std::reverse(perm.begin(), perm.end());
        for (size_t lb = 0; lb < perm.size(); ++lb) b.table[lb] = a.table[perm[lb]];
        for (int32_t j = 0; j < a.n_ctx; ++j) {
            std::copy(a.k_at(j), a.k_at(j) + hd, const_cast<uint16_t *>(b.k_at(j)));
            std::copy(a.v_at(j), a.v_at(j) + hd, const_cast<uint16_t *>(b.v_at(j)));
        }
        for (const variant & var : all) {
            const auto x = run(var.t, a), y = run(var.t, b), z = run(var.t, a, 123.0f);
            for (int64_t i = 0; i < hd; ++i) {
                CHECK_EQ(x[i], y[i]);
                CHECK_EQ(x[i], z[i]);
            }
        }
    }
}

TM_TEST("kernels: attend_f16 rejects an empty context or head") {
    std::vector<variant> all = simd_variants();
    all.insert(all.begin(), variant{"baseline", kernels_for(isa_level::baseline)});
    const float q[8] = {0};
    const uint16_t kv[8] = {0};
    const int32_t table[1] = {0};
    float out[8], scratch[16];
    for (const variant & var : all) {
        CHECK_THROWS_CODE(var.t.attend_f16(q, 8, 1.0f, 0.0f, 0, table, k_block, kv, kv, 0, 0, out, scratch), invalid_argument);
        CHECK_THROWS_CODE(var.t.attend_f16(q, 0, 1.0f, 0.0f, 1, table, k_block, kv, kv, 0, 0, out, scratch), invalid_argument);
    }
}

namespace {

// n_heads queries for one KV head: head 0 is the cache's own query (the one `rising` ramps keys along),
// the others random of the same magnitude, and one the negated query (its maximum moves differently).
std::vector<float> group_queries(const paged_cache & c, int64_t n_heads, float q_mag, std::mt19937 & rng) {
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::vector<float> q(size_t(n_heads * c.head_dim));   // (n_heads, head_dim)
    for (int64_t g = 0; g < n_heads; ++g)
        for (int64_t i = 0; i < c.head_dim; ++i)
            q[size_t(g * c.head_dim + i)] = g == 0 ? c.q[size_t(i)] : g == 1 ? -c.q[size_t(i)] : u(rng) * q_mag;
    return q;
}

} // namespace

TM_TEST("kernels: attend_f16_heads equals attend_f16 per head bit for bit at every level") {
    std::mt19937 rng(15);
    std::vector<variant> all = simd_variants();
    all.insert(all.begin(), variant{"baseline", kernels_for(isa_level::baseline)});
    const int32_t ctxs[] = {1, 2, 16, 17, 33, 257, 1000};
    int64_t checked = 0;
    for (int64_t hd : {int64_t(8), int64_t(20), int64_t(32), int64_t(64), int64_t(96), int64_t(128)})
        for (int32_t n_ctx : ctxs)
            for (float qm : q_mags)
                for (bool rising : {false, true}) {
                    const paged_cache c = make_cache(hd, n_ctx, qm, rising, rng);
                    const float scale = 1.0f / std::sqrt(float(hd));
                    const float cap = rising ? 30.0f : 0.0f;   // soft-capped scores (gemma2) for half the cases
                    for (int64_t n_heads : {int64_t(1), int64_t(3), int64_t(4), int64_t(7), int64_t(8)}) {
                        const std::vector<float> q = group_queries(c, n_heads, qm, rng);
                        for (const variant & var : all) {
                            // Scratch starts as NaN: a read of anything the kernel did not write shows.
                            std::vector<float> out(q.size(), -7.0f),
                                scratch(attend_f16_heads_scratch(n_heads, hd), std::nanf(""));
                            var.t.attend_f16_heads(q.data(), n_heads, hd, scale, cap, c.n_ctx, c.table.data(), k_block,
                                                   c.k_base(), c.v_base(), c.block_stride(), c.slot_stride(),
                                                   out.data(), scratch.data());
                            std::vector<float> one(static_cast<size_t>(hd)), one_scratch(static_cast<size_t>(2 * hd));
                            for (int64_t g = 0; g < n_heads; ++g) {
                                var.t.attend_f16(q.data() + g * hd, hd, scale, cap, c.n_ctx, c.table.data(), k_block,
                                                 c.k_base(), c.v_base(), c.block_stride(), c.slot_stride(), one.data(),
                                                 one_scratch.data());
                                for (int64_t i = 0; i < hd; ++i) CHECK_EQ(out[size_t(g * hd + i)], one[size_t(i)]);
                                ++checked;
                            }
                        }
                    }
                }
    CHECK(checked > 0);
}

TM_TEST("kernels: attend_f16_heads rejects no heads, an empty context or head") {
    std::vector<variant> all = simd_variants();
    all.insert(all.begin(), variant{"baseline", kernels_for(isa_level::baseline)});
    const float q[16] = {0};
    const uint16_t kv[8] = {0};
    const int32_t table[1] = {0};
    float out[16], scratch[256];
    CHECK(attend_f16_heads_scratch(2, 8) <= 256);
    for (const variant & var : all) {
        CHECK_THROWS_CODE(var.t.attend_f16_heads(q, 0, 8, 1.0f, 0.0f, 1, table, k_block, kv, kv, 0, 0, out, scratch), invalid_argument);
        CHECK_THROWS_CODE(var.t.attend_f16_heads(q, 2, 8, 1.0f, 0.0f, 0, table, k_block, kv, kv, 0, 0, out, scratch), invalid_argument);
        CHECK_THROWS_CODE(var.t.attend_f16_heads(q, 2, 0, 1.0f, 0.0f, 1, table, k_block, kv, kv, 0, 0, out, scratch), invalid_argument);
    }
}

// ggml_vec_dot_f16 sums the products past its last full step (GGML_F16_STEP: 32 on AVX2, 64 on AVX-512) in
// double, the lanes before it in F32. Two keys whose scores differ only by that: key 0's products are 1,
// 2^-24, 2^-24 (an F32 running sum stays at 1, a double sum rounds to 1 + 2^-23), key 1's is 1; a scale of
// 2^20 turns the 2^-23 into a score gap of 0.125, so out = 1 / (1 + e^-0.125) = 0.531 where the products
// were summed in double, 0.5 where in F32 lanes (key 0's value is 1, key 1's 0).
TM_TEST("kernels: attend_f16 sums ggml_vec_dot_f16's leftovers in double, per level's step") {
    const float gap = 1.0f / (1.0f + std::exp(-0.125f)), equal = 0.5f;
    for (const tm_test::kernel_level & l : tm_test::kernel_levels()) {
        const std::string name = l.name;
        const int64_t step = name == "baseline" ? 0 : name == "avx2" ? 32 : 64;
        for (int64_t head_dim : {int64_t(8), int64_t(32), int64_t(64)}) {
            std::vector<float> q(static_cast<size_t>(head_dim), 0.0f);
            q[0] = 1.0f;
            q[1] = q[2] = 0x1p-12f;
            std::vector<uint16_t> k(size_t(2 * head_dim), 0), v(size_t(2 * head_dim), 0);
            for (int i = 0; i < 3; ++i) k[size_t(i)] = quant::fp32_to_fp16(q[size_t(i)]);   // key 0
            k[size_t(head_dim)] = quant::fp32_to_fp16(1.0f);                                 // key 1
            for (int64_t i = 0; i < head_dim; ++i) v[size_t(i)] = quant::fp32_to_fp16(1.0f);  // value 0 all ones
            const int32_t table[1] = {0};
            std::vector<float> out(static_cast<size_t>(head_dim)), scratch(size_t(2 * head_dim));
            l.table.attend_f16(q.data(), head_dim, 0x1p20f, 0.0f, 2, table, 2, k.data(), v.data(), 0, size_t(head_dim),
                               out.data(), scratch.data());
            // The scalar reference sums in F32 left to right; a SIMD level has leftovers unless step divides head_dim.
            const bool leftovers = step > 0 && head_dim % step != 0;
            const float want = leftovers ? gap : equal;
            if (!(std::fabs(out[0] - want) <= 1e-3f))
                std::fprintf(stderr, "    %s head_dim %lld: out %.6f, want %.6f\n", l.name, (long long)head_dim, out[0], want);
            CHECK_NEAR(out[0], want, 1e-3);
        }
    }
}

// The online softmax's sum S = S * ms + vs is rounded twice (a product, then a sum) at every level, as
// llama.cpp's FMA builds compute it: fused, it moved a head's output by an ulp after a new maximum, which
// flipped a Q8_1 rounding of SmolLM2-135M's attention output against node-llama-cpp. The data make every
// other step exact and level-independent, so the expected output can be written here: the query is e_0,
// key j is c_j e_0 (score c_j exactly, scale 1), every value is all ones (acc = f16(acc + vs) whether the
// level uses an FMA or not). Scores drift upward so new maxima (ms < 1) are frequent.
TM_TEST("kernels: attend_f16's softmax sum is S * ms + vs with two roundings at every level") {
    std::mt19937 rng(23);
    std::uniform_real_distribution<float> step(-1.0f, 1.5f);
    int64_t differs = 0, checked = 0;
    for (int64_t hd : {int64_t(40), int64_t(64), int64_t(128)}) {
        for (int rep = 0; rep < 40; ++rep) {
            const int32_t n_ctx = 24;
            std::vector<uint16_t> k(size_t(n_ctx * hd), 0), v(size_t(n_ctx * hd), quant::fp32_to_fp16(1.0f));
            std::vector<float> c(static_cast<size_t>(n_ctx));
            float walk = 0.0f;
            for (int32_t j = 0; j < n_ctx; ++j) {
                walk += step(rng);
                k[size_t(j * hd)] = quant::fp32_to_fp16(walk);
                c[size_t(j)] = quant::fp16_to_fp32(k[size_t(j * hd)]);
            }
            std::vector<float> q(static_cast<size_t>(hd), 0.0f);
            q[0] = 1.0f;
            // The expected output, and the one a fused S would give.
            float m = -INFINITY, s2 = 0.0f, s1 = 0.0f, acc = 0.0f;
            for (int32_t j = 0; j < n_ctx; ++j) {
                float ms = 1.0f, vs = 1.0f;
                if (c[size_t(j)] > m) {
                    ms = j == 0 ? 0.0f : std::exp(m - c[size_t(j)]);
                    m = c[size_t(j)];
                    acc = quant::fp16_to_fp32(quant::fp32_to_fp16(acc * ms));
                } else {
                    vs = std::exp(c[size_t(j)] - m);
                }
                acc = quant::fp16_to_fp32(quant::fp32_to_fp16(acc + vs));
                const float product = s2 * ms;   // a statement of its own: rounded before the sum
                s2 = product + vs;
                s1 = std::fma(s1, ms, vs);
            }
            const float want = acc * (1.0f / s2);
            if (want != acc * (1.0f / s1)) ++differs;
            const int32_t table[1] = {0};
            for (const tm_test::kernel_level & l : tm_test::kernel_levels()) {
                std::vector<float> out(static_cast<size_t>(hd)), scratch(attend_f16_heads_scratch(2, hd));
                l.table.attend_f16(q.data(), hd, 1.0f, 0.0f, n_ctx, table, n_ctx, k.data(), v.data(), 0, size_t(hd),
                                   out.data(), scratch.data());
                if (out[0] != want) std::fprintf(stderr, "    %s head_dim %lld: out %.9g, want %.9g\n", l.name, (long long)hd, out[0], want);
                CHECK_EQ(out[0], want);
                std::vector<float> q2(q);
                q2.insert(q2.end(), q.begin(), q.end());
                std::vector<float> out2(q2.size());
                l.table.attend_f16_heads(q2.data(), 2, hd, 1.0f, 0.0f, n_ctx, table, n_ctx, k.data(), v.data(), 0,
                                         size_t(hd), out2.data(), scratch.data());
                CHECK_EQ(out2[0], want);
                CHECK_EQ(out2[size_t(hd)], want);
                ++checked;
            }
        }
    }
    std::printf("  softmax sum: %lld of 120 cases where a fused S would differ, %lld level runs\n", (long long)differs, (long long)checked);
    CHECK(differs >= 10);
    CHECK(checked >= 120);
}
