// matmul kernels: every variant the machine runs against the scalar reference, the reference against
// a double-precision dot of the dequantized operands, and batch/thread invariance of matmul().
#include "check.h"
#include "kernel-levels.h"

#include "base/cpu-features.h"
#include "base/error.h"
#include "base/thread-pool.h"
#include "kernels/block-step/reference.h"
#include "kernels/kernels.h"
#include "kernels/matmul.h"
#include "kernels/ref/ref.h"
#include "quant/fp16.h"
#include "quant/q4-1.h"
#include "quant/q5-1.h"
#include "quant/q5-k.h"
#include "quant/q6-k.h"
#include "quant/q8-0.h"
#include "quant/q4-k-x16.h"
#include "quant/q4-0-x16.h"
#include "quant/q4-1-x16.h"
#include "quant/q5-0-x16.h"
#include "quant/q6-k-x16.h"
#include "quant/q4-k.h"
#include "quant/q8-1.h"
#include "quant/q8-k.h"
#include "quant/quant.h"

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

using namespace tmill;
using namespace tmill::kernels;

namespace {

const ggml_type all_types[] = {ggml_type::f32,  ggml_type::f16,  ggml_type::bf16,   ggml_type::q8_0,
                               ggml_type::q4_0, ggml_type::q4_1, ggml_type::q5_0,   ggml_type::q5_1,
                               ggml_type::q2_k, ggml_type::q3_k, ggml_type::q4_k,   ggml_type::q5_k,
                               ggml_type::q6_k, ggml_type::iq4_nl, ggml_type::iq4_xs};

// n_in per type: odd block counts and non-multiples of the vector width exercise every tail.
int64_t test_n_in(ggml_type t) {
    switch (t) {
        case ggml_type::f32: case ggml_type::f16: case ggml_type::bf16: return 100;
        case ggml_type::q8_0: case ggml_type::q4_0: case ggml_type::q4_1: case ggml_type::q5_0:
        case ggml_type::q5_1: case ggml_type::iq4_nl: return 32 * 7;
        default: return 256 * 3;
    }
}

// Where a block format keeps its F16 scales: byte offsets of d and of the second F16 (dmin or m; -1
// when none). Every other byte pattern is a valid block.
struct half_fields {
    int d, second;
};
half_fields halves_of(ggml_type type, size_t block) {
    switch (type) {
        case ggml_type::q4_1: case ggml_type::q5_1: case ggml_type::q4_k: case ggml_type::q5_k: return {0, 2};
        case ggml_type::q5_0: case ggml_type::iq4_nl: case ggml_type::iq4_xs: return {0, -1};
        case ggml_type::q2_k: return {int(block) - 4, int(block) - 2};
        case ggml_type::q3_k: case ggml_type::q6_k: return {int(block) - 2, -1};
        default: return {-1, -1};
    }
}

// Random weights of `type`: float and Q8_0/Q4_0 rows through the quantizers, the other block formats as
// random bytes with small positive F16 scales.
std::vector<uint8_t> make_weights(ggml_type type, int64_t n_out, int64_t n_in, std::mt19937 & rng) {
    const size_t row = quant::row_bytes(type, n_in);
    std::vector<uint8_t> w(row * size_t(n_out));
    std::normal_distribution<float> normal(0.0f, 1.0f);
    const size_t block = quant::type_block_bytes(type);
    const half_fields h = halves_of(type, block);
    if (h.d >= 0) {
        std::uniform_int_distribution<int> byte(0, 255);
        std::uniform_real_distribution<float> scale(0.001f, 0.01f);
        for (auto & b : w) b = uint8_t(byte(rng));
        for (size_t off = 0; off < w.size(); off += block) {
            const uint16_t d = quant::fp32_to_fp16(scale(rng)), second = quant::fp32_to_fp16(scale(rng));
            std::memcpy(&w[off + size_t(h.d)], &d, 2);
            if (h.second >= 0) std::memcpy(&w[off + size_t(h.second)], &second, 2);
        }
        return w;
    }
    std::vector<float> src(static_cast<size_t>(n_in));
    for (int64_t r = 0; r < n_out; ++r) {
        for (auto & v : src) v = normal(rng);
        quant::quantize_row(type, src.data(), w.data() + size_t(r) * row, n_in);
    }
    return w;
}

std::vector<float> make_x(int64_t n, std::mt19937 & rng) {
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> x(static_cast<size_t>(n));
    for (auto & v : x) v = normal(rng);
    return x;
}

struct variant {
    const char * name;
    matmul_rows_fn fn;
};

// The reference first, then every other level this machine runs (tm_test::kernel_levels()).
std::vector<variant> variants(ggml_type type) {
    std::vector<variant> out;
    for (const tm_test::kernel_level & l : tm_test::kernel_levels()) out.push_back({l.name, matmul_rows_for(l.table, type)});
    return out;
}

// The reference whose bits variant v must give for type: the level's numerics. Q6_K on the AVX-512 levels takes
// the block step (block_step_ref::matmul_q6_k, NOTE(q6-k-block-step)); every other pair the baseline's.
matmul_rows_fn reference_for(ggml_type type, const variant & v) {
    if (type == ggml_type::q6_k && std::strncmp(v.name, "avx512", 6) == 0) return block_step_ref::matmul_q6_k;
    return variants(type)[0].fn;
}

std::vector<kernel_table> levels() {
    std::vector<kernel_table> out;
    for (const tm_test::kernel_level & l : tm_test::kernel_levels()) out.push_back(l.table);
    return out;
}

} // namespace

TM_TEST("kernels: matmul variants agree with a double dot of the dequantized operands") {
    std::mt19937 rng(1234);
    for (ggml_type type : all_types) {
        const int64_t n_in = test_n_in(type), n_out = 37, n_tok = 6;
        const std::vector<uint8_t> w = make_weights(type, n_out, n_in, rng);
        const std::vector<float> x = make_x(n_in * n_tok, rng);
        const ggml_type act = quant::activation_type(type);
        const size_t w_row = quant::row_bytes(type, n_in), x_row = quant::row_bytes(act, n_in);
        // The activation rows as the kernels see them, and both operands back in F32.
        std::vector<uint8_t> xa(x_row * size_t(n_tok));
        std::vector<float> xd(size_t(n_in * n_tok)), wd(size_t(n_in * n_out));
        for (int64_t t = 0; t < n_tok; ++t) {
            quant::quantize_row(act, x.data() + t * n_in, xa.data() + size_t(t) * x_row, n_in);
            quant::dequantize_row(act, xa.data() + size_t(t) * x_row, xd.data() + t * n_in, n_in);
        }
        for (int64_t r = 0; r < n_out; ++r) quant::dequantize_row(type, w.data() + size_t(r) * w_row, wd.data() + r * n_in, n_in);
        double max_w = 0.0;
        for (float v : wd) max_w = std::fmax(max_w, std::fabs(v));

        std::vector<float> y_ref;
        for (const variant & v : variants(type)) {
            std::vector<float> y(size_t(n_out * n_tok), NAN);
            v.fn(w.data(), w_row, xa.data(), x_row, n_tok, n_in, 0, n_out, y.data(), n_out);
            if (y_ref.empty()) y_ref = y;
            int bad = 0;
            for (int64_t t = 0; t < n_tok; ++t)
                for (int64_t r = 0; r < n_out; ++r) {
                    double truth = 0.0, mag = 0.0, xmag = 0.0;
                    for (int64_t i = 0; i < n_in; ++i) {
                        truth += double(wd[r * n_in + i]) * double(xd[t * n_in + i]);
                        mag += std::fabs(double(wd[r * n_in + i]) * double(xd[t * n_in + i]));
                        xmag += std::fabs(double(xd[t * n_in + i]));
                    }
                    // Float accumulation over blocks; K-quants subtract two scaled sums (scales and
                    // mins), whose magnitudes are bounded by max|w| * sum|x|.
                    const double tol = 2e-5 * (mag + max_w * xmag) + 1e-6;
                    const double got = y[size_t(t * n_out + r)];
                    if (!(std::fabs(got - truth) <= tol) || !(std::fabs(got - y_ref[size_t(t * n_out + r)]) <= tol)) {
                        if (++bad <= 3)
                            std::fprintf(stderr, "    type %u %s t=%lld r=%lld: got %.9g truth %.9g ref %.9g\n",
                                         unsigned(type), v.name, (long long)t, (long long)r, got, truth,
                                         double(y_ref[size_t(t * n_out + r)]));
                    }
                }
            CHECK_EQ(bad, 0);
        }
    }
}

TM_TEST("kernels: matmul rows are batch, split and thread-count invariant (bitwise)") {
    std::mt19937 rng(99);
    thread_pool pool1(1), pool2(2), pool3(3);
    for (const kernel_table & k : levels()) {
        for (ggml_type type : all_types) {
            const int64_t n_in = test_n_in(type), n_out = 41, n_tok = 7;
            const std::vector<uint8_t> w = make_weights(type, n_out, n_in, rng);
            const std::vector<float> x = make_x(n_in * n_tok, rng);
            std::vector<uint8_t> scratch(matmul_scratch_bytes(type, n_in, n_tok) + 1);
            std::vector<float> y7(size_t(n_out * n_tok)), y(size_t(n_out * n_tok));
            matmul(pool1, k, type, w.data(), n_out, n_in, x.data(), n_tok, y7.data(), scratch.data(), scratch.size());
            int diffs = 0;
            for (int64_t t = 0; t < n_tok; ++t) {
                std::vector<float> y1(static_cast<size_t>(n_out));
                matmul(pool2, k, type, w.data(), n_out, n_in, x.data() + t * n_in, 1, y1.data(), scratch.data(), scratch.size());
                diffs += std::memcmp(y1.data(), y7.data() + t * n_out, size_t(n_out) * 4) != 0;
            }
            // Tokens 2..6 as a batch of 5 (another tile mix), on 3 threads.
            matmul(pool3, k, type, w.data(), n_out, n_in, x.data() + 2 * n_in, 5, y.data(), scratch.data(), scratch.size());
            diffs += std::memcmp(y.data(), y7.data() + 2 * n_out, size_t(5 * n_out) * 4) != 0;
            for (thread_pool * p : {&pool2, &pool3}) {
                matmul(*p, k, type, w.data(), n_out, n_in, x.data(), n_tok, y.data(), scratch.data(), scratch.size());
                diffs += std::memcmp(y.data(), y7.data(), y.size() * 4) != 0;
            }
            if (diffs) std::fprintf(stderr, "    %s type %u: %d mismatching runs\n", k.isa, unsigned(type), diffs);
            CHECK_EQ(diffs, 0);
        }
    }
}

TM_TEST("kernels: several weights in one job equal one matmul each (bitwise), and mixed activation types are refused") {
    std::mt19937 rng(7);
    thread_pool pool1(1), pool2(2), pool3(3);
    const kernel_table & k = kernels_get();
    // Q4_K and Q6_K share Q8_K activations (q, k and v of a Q4_K_M file); Q8_0 with Q4_0 and Q5_0.
    const ggml_type groups[][3] = {{ggml_type::q4_k, ggml_type::q6_k, ggml_type::q4_k},
                                   {ggml_type::q8_0, ggml_type::q4_0, ggml_type::q5_0}};
    for (const auto & types : groups) {
        const int64_t n_in = test_n_in(types[0]), n_out[3] = {37, 8, 70};
        const std::vector<float> x = make_x(n_in * 3, rng);
        for (int64_t n_tok : {int64_t(1), int64_t(3)}) {
            std::vector<std::vector<uint8_t>> w;
            std::vector<std::vector<float>> want, got;
            std::vector<uint8_t> scratch(matmul_scratch_bytes(types[0], n_in, n_tok));
            for (int i = 0; i < 3; ++i) {
                w.push_back(make_weights(types[i], n_out[i], n_in, rng));
                want.emplace_back(size_t(n_out[i] * n_tok));
                got.emplace_back(size_t(n_out[i] * n_tok), -1.0f);
                matmul(pool1, k, types[i], w[i].data(), n_out[i], n_in, x.data(), n_tok, want[i].data(), scratch.data(), scratch.size());
            }
            for (thread_pool * p : {&pool1, &pool2, &pool3}) {
                const void * xa = matmul_prepare(*p, k, types[0], n_in, x.data(), n_tok, scratch.data(), scratch.size());
                matmul_part parts[3];
                for (int i = 0; i < 3; ++i) parts[i] = {types[i], w[i].data(), n_out[i], got[i].data()};
                matmul_prepared_many(*p, k, parts, 3, n_in, xa, n_tok);
                for (int i = 0; i < 3; ++i) CHECK(std::memcmp(got[i].data(), want[i].data(), want[i].size() * 4) == 0);
            }
        }
    }
    std::vector<uint8_t> w(34 * 256), scratch(34 * 8);
    std::vector<float> y(64);
    const matmul_part mixed[2] = {{ggml_type::q8_0, w.data(), 2, y.data()}, {ggml_type::q4_k, w.data(), 2, y.data()}};
    CHECK_THROWS_CODE(matmul_prepared_many(pool2, k, mixed, 2, 256, scratch.data(), 1), invalid_argument);
    CHECK_THROWS_CODE(matmul_prepared_many(pool2, k, mixed, 0, 256, scratch.data(), 1), invalid_argument);
}

TM_TEST("kernels: matmul checks its arguments") {
    thread_pool pool(1);
    const kernel_table & k = kernels_get();
    std::vector<uint8_t> w(34 * 4), scratch(34);
    std::vector<float> x(64), y(4);
    CHECK_THROWS_CODE(matmul(pool, k, ggml_type::q8_0, w.data(), 2, 48, x.data(), 1, y.data(), scratch.data(), scratch.size()),
                      invalid_argument);
    CHECK_THROWS_CODE(matmul(pool, k, ggml_type::q8_0, w.data(), 2, 64, x.data(), 1, y.data(), scratch.data(), 10),
                      invalid_argument);
    CHECK_THROWS_CODE(matmul(pool, k, ggml_type::iq3_s, w.data(), 2, 256, x.data(), 1, y.data(), scratch.data(), scratch.size()),
                      invalid_argument);
    CHECK_EQ(matmul_scratch_bytes(ggml_type::f32, 64, 3), size_t(0));
    CHECK_EQ(matmul_scratch_bytes(ggml_type::q4_k, 512, 2), size_t(2 * 2 * 292));
}

TM_TEST("kernels: dispatch picks the machine's level and fills every entry") {
    const kernel_table & k = kernels_get();
    CHECK(std::strcmp(k.isa, cpu_isa_name()) == 0);
    const kernel_table base = kernels_for(isa_level::baseline);
    CHECK(base.matmul_q8_0 == &ref::matmul_q8_0);
    CHECK(base.rope == &ref::rope);
    // Every entry of every level is filled (kernels/entries.h lists them).
    for (const tm_test::kernel_level & l : tm_test::kernel_levels()) {
        const kernel_table & t = l.table;
        int unset = 0;
#define TM_CHECK_ENTRY(entry, type)                                                 \
    if (t.entry == nullptr) {                                                       \
        ++unset;                                                                    \
        std::fprintf(stderr, "    %s: %s unset\n", l.name, #entry);                \
    }
        TM_KERNEL_ENTRIES(TM_CHECK_ENTRY)
#undef TM_CHECK_ENTRY
        CHECK_EQ(unset, 0);
    }
    if (cpu_features_get().avx2) {
        const kernel_table t = kernels_for(isa_level::avx2);
        CHECK(t.rope == &avx2::rope);
        CHECK(t.quantize_q8_0 == &avx2::quantize_q8_0);
    }
    if (cpu_features_get().avx512) {
        // As built for an Intel CPU: AMD's table streams Q4_K and Q6_K differently (check_x16_hw_stream).
        const kernel_table t = kernels_for(isa_level::avx512, cpu_vendor::intel);
        CHECK(t.matmul_q8_0 == &avx512::matmul_q8_0);
        CHECK(t.matmul_q4_k == &avx512::matmul_q4_k);
        CHECK(t.matmul_q6_k == &avx512::matmul_q6_k);
        CHECK(t.matmul_q6_k_x16 == &avx512::matmul_q6_k_x16);
        CHECK(t.q6_k_x16);
        CHECK(t.rope == &avx512::rope);
        CHECK(t.quantize_q8_0 == &avx512::quantize_q8_0);
    }
}

// NOTE(bf16-dot): the pair-dot kernel, on the CPU where it has AVX512-BF16 and under emulation everywhere, gives its
// scalar reference's bits in every tile shape: row lengths that are multiples of 32 (tinyBLAS's order; one of them
// not of 64) and others (ggml_vec_dot_bf16's, with leftovers, and one shorter than a 64-element step). The values
// span many binades, so the adds round and cancel; none is near the denormal range.
TM_TEST("kernels: BF16 pair-dot matmuls give the scalar reference's bits in every tile shape") {
    std::mt19937 rng(515);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::uniform_int_distribution<int> binade(-12, 12);
    std::vector<std::pair<const char *, matmul_rows_fn>> kernels;
    if (cpu_features_get().avx2) kernels.push_back({"avx512-emulated", avx512_emulated::matmul_bf16_dot});
    if (cpu_features_get().avx512_bf16) kernels.push_back({"avx512", avx512::matmul_bf16_dot});
    if (kernels.empty()) std::printf("  (no AVX2: neither the emulated nor the real pair-dot kernel can run here)\n");
    const int64_t n_out = 37;
    for (int64_t n_in : {int64_t(224), int64_t(512), int64_t(100), int64_t(40)}) {
        std::vector<uint16_t> w(size_t(n_out * n_in)), x(size_t(9 * n_in));
        for (auto * v : {&w, &x})
            for (auto & e : *v) e = quant::fp32_to_bf16(std::ldexp(normal(rng), binade(rng)));
        const size_t row = size_t(n_in) * 2;
        for (int64_t n_tok : {int64_t(1), int64_t(3), int64_t(4), int64_t(5), int64_t(9)}) {
            std::vector<float> want(size_t(n_out * n_tok));
            ref::matmul_bf16_dot(w.data(), row, x.data(), row, n_tok, n_in, 0, n_out, want.data(), n_out);
            for (const auto & [name, fn] : kernels) {
                std::vector<float> got(want.size(), NAN);
                // Two row ranges, so tiles and one-row leftovers start in the middle of the matrix too.
                fn(w.data(), row, x.data(), row, n_tok, n_in, 0, 13, got.data(), n_out);
                fn(w.data(), row, x.data(), row, n_tok, n_in, 13, n_out, got.data(), n_out);
                const int d = std::memcmp(got.data(), want.data(), want.size() * 4) != 0;
                if (d) std::fprintf(stderr, "    %s n_in=%lld n_tok=%lld: outputs differ from the reference\n", name, (long long)n_in, (long long)n_tok);
                CHECK_EQ(d, 0);
            }
        }
    }
    if (cpu_features_get().avx512) {
        CHECK(kernels_for(isa_level::avx512, cpu_vendor::intel, true).matmul_bf16 == &avx512::matmul_bf16_dot);
        CHECK(kernels_for(isa_level::avx512, cpu_vendor::amd, false).matmul_bf16 == &avx512::matmul_bf16);
    }
}

// Raw Q8_0 blocks over the whole int8 range (weights -128..127, activations -127..127 as the
// quantizer makes them) and random F16 scales: the one-token rows and every multi-token tile shape
// give bitwise the same outputs (their int32 lanes are formed differently), and stay near the reference.
TM_TEST("kernels: q8_0 one-token and multi-token tiles agree bitwise at the int8 extremes") {
    std::mt19937 rng(7);
    const int64_t n_in = 32 * 65, n_out = 23, n_tok = 9, nb = n_in / 32;
    std::uniform_int_distribution<int> wbyte(-128, 127), xbyte(-127, 127), pick(0, 3);
    std::uniform_real_distribution<float> scale(0.01f, 0.1f);
    auto fill = [&](std::vector<quant::block_q8_0> & blocks, bool weights) {
        for (auto & b : blocks) {
            b.d = quant::fp32_to_fp16(scale(rng));
            for (auto & q : b.qs) {
                // A quarter of the values at the extremes, so whole lanes saturate a naive int16 sum.
                const int e = pick(rng);
                q = int8_t(e == 0 ? (weights ? -128 : -127) : e == 1 ? 127 : weights ? wbyte(rng) : xbyte(rng));
            }
        }
    };
    std::vector<quant::block_q8_0> w(size_t(n_out * nb)), x(size_t(n_tok * nb));
    fill(w, true);
    fill(x, false);
    const size_t row = size_t(nb) * sizeof(quant::block_q8_0);
    const kernel_table rt = kernels_for(isa_level::baseline);
    std::vector<float> y_ref(size_t(n_out * n_tok));
    rt.matmul_q8_0(w.data(), row, x.data(), row, n_tok, n_in, 0, n_out, y_ref.data(), n_out);
    for (const kernel_table & k : levels()) {
        std::vector<float> y(size_t(n_out * n_tok)), y1(static_cast<size_t>(n_out));
        k.matmul_q8_0(w.data(), row, x.data(), row, n_tok, n_in, 0, n_out, y.data(), n_out);
        int diffs = 0, far = 0;
        for (int64_t t = 0; t < n_tok; ++t) {
            k.matmul_q8_0(w.data(), row, x.data() + t * nb, row, 1, n_in, 0, n_out, y1.data(), n_out);
            diffs += std::memcmp(y1.data(), y.data() + t * n_out, size_t(n_out) * 4) != 0;
            for (int64_t r = 0; r < n_out; ++r) {
                const float a = y[size_t(t * n_out + r)], b = y_ref[size_t(t * n_out + r)];
                far += !(std::fabs(a - b) <= 1e-4f * (1.0f + std::fabs(b)));
            }
        }
        if (diffs || far) std::fprintf(stderr, "    %s: %d token rows differ, %d outputs far from ref\n", k.isa, diffs, far);
        CHECK_EQ(diffs, 0);
        CHECK_EQ(far, 0);
    }
}

// Rows so wide that the tile walk cuts the tokens into 4-token blocks and the rows into minimal panels
// (tiling.h): every level still gives each token the bits it gets alone, on 1 and 2 threads.
TM_TEST("kernels: cache-blocked tile walk over wide rows is batch invariant (bitwise)") {
    std::mt19937 rng(31);
    thread_pool pool1(1), pool2(2);
    for (const kernel_table & k : levels()) {
        for (ggml_type type : {ggml_type::f32, ggml_type::f16, ggml_type::q8_0, ggml_type::q4_0}) {
            const int64_t n_in = 32 * 1600, n_out = 13, n_tok = 11;
            const std::vector<uint8_t> w = make_weights(type, n_out, n_in, rng);
            const std::vector<float> x = make_x(n_in * n_tok, rng);
            std::vector<uint8_t> scratch(matmul_scratch_bytes(type, n_in, n_tok) + 1);
            std::vector<float> y(size_t(n_out * n_tok)), y2(size_t(n_out * n_tok)), y1(static_cast<size_t>(n_out));
            matmul(pool1, k, type, w.data(), n_out, n_in, x.data(), n_tok, y.data(), scratch.data(), scratch.size());
            matmul(pool2, k, type, w.data(), n_out, n_in, x.data(), n_tok, y2.data(), scratch.data(), scratch.size());
            int diffs = std::memcmp(y.data(), y2.data(), y.size() * 4) != 0;
            for (int64_t t = 0; t < n_tok; ++t) {
                matmul(pool2, k, type, w.data(), n_out, n_in, x.data() + t * n_in, 1, y1.data(), scratch.data(), scratch.size());
                diffs += std::memcmp(y1.data(), y.data() + t * n_out, size_t(n_out) * 4) != 0;
            }
            if (diffs) std::fprintf(stderr, "    %s type %u: %d mismatches\n", k.isa, unsigned(type), diffs);
            CHECK_EQ(diffs, 0);
        }
    }
}

namespace {

// Random K-quant weights (n_out rows of n_in inputs, by default 19 super-blocks: Qwen2.5-0.5B's ffn_down width)
// and up to 9 tokens of Q8_K activations, for the tile-shape tests below.
struct k_case {
    static constexpr int64_t n_out = 27, max_tok = 9;
    int64_t n_in;
    std::vector<uint8_t> w, xa;
    size_t w_row, x_row;
    k_case(ggml_type type, std::mt19937 & rng, int64_t n_in_ = 256 * 19)
        : n_in(n_in_), w(make_weights(type, n_out, n_in, rng)), w_row(quant::row_bytes(type, n_in)), x_row(quant::row_bytes(ggml_type::q8_k, n_in)) {
        const std::vector<float> x = make_x(n_in * max_tok, rng);
        xa.resize(x_row * size_t(max_tok));
        for (int64_t t = 0; t < max_tok; ++t) quant::quantize_row(ggml_type::q8_k, x.data() + t * n_in, xa.data() + size_t(t) * x_row, n_in);
    }
};

// Runs fn over token counts and row ranges that cover every tile shape of kernels/simd/matmul-k.cpp
// (NOTE(k-matmul-tiles)) — 1..4 tokens and their remainders, 4-row and 2-row tiles, the one-row tiles of a
// range's leftover rows, a range that does not start at row 0 — and counts the outputs inside the range whose
// bits differ from want (n_out x max_tok, y[t][r]) and those written outside it.
int tile_shape_mismatches(matmul_rows_fn fn, const k_case & c, const std::vector<float> & want) {
    struct rows {
        int64_t r0, r1;
    };
    const rows ranges[] = {{0, 27}, {3, 22}, {5, 6}, {25, 27}};
    const int64_t n_out = k_case::n_out;
    int bad = 0;
    for (int64_t n_tok : {1, 2, 3, 4, 5, 6, 9})
        for (const rows & rr : ranges) {
            std::vector<float> y(size_t(n_out * n_tok), NAN);
            fn(c.w.data(), c.w_row, c.xa.data(), c.x_row, n_tok, c.n_in, rr.r0, rr.r1, y.data(), n_out);
            for (int64_t t = 0; t < n_tok; ++t)
                for (int64_t r = 0; r < n_out; ++r) {
                    const bool inside = r >= rr.r0 && r < rr.r1;
                    const float got = y[size_t(t * n_out + r)];
                    bad += inside ? std::memcmp(&got, &want[size_t(t * n_out + r)], 4) != 0 : !std::isnan(got);
                }
        }
    return bad;
}

// Q5_K as the SIMD levels accumulate it (kernels/simd/matmul-k.cpp, NOTE(k-matmul)), written out per lane: per
// super-block exact int32 lanes of sum_j sc_j * dot_j — `lanes` of them, element e of sub-block j in lane
// (e % 32) / 4, plus 8 * (j % 2) when there are 16 (AVX-512's 64 weights a register) — each added with
// fma(d_x * d_w, lane, acc); the mins m_j * xsum_j either as one exact total in a scalar chain,
// fma(d_x * dmin_w, msum, mins) (8 lanes, ggml's AVX2 order), or in 8 lanes of their own (16 lanes); the
// lanes summed as hsum8 does (16 lanes: lanes l + l + 8 first), the mins subtracted.
float q5_k_lanes_model(const quant::block_q5_k * w, const quant::block_q8_k * x, int64_t nb, int lanes) {
    float acc[16] = {}, macc[8] = {}, mins = 0.0f;
    for (int64_t b = 0; b < nb; ++b) {
        uint8_t sc[8], m[8];
        quant::unpack_k4_scales(w[b].scales, sc, m);
        int lane[16] = {}, mlane[8], msum = 0;
        for (int e = 0; e < quant::qk_k; ++e) {
            const int j = e / 32, c = j / 2, l = e % 32;
            const int nib = j % 2 ? w[b].qs[32 * c + l] >> 4 : w[b].qs[32 * c + l] & 0x0f;
            const int q = nib | (((w[b].qh[l] >> j) & 1) << 4);
            lane[(lanes == 16 ? 8 * (j % 2) : 0) + l / 4] += int(sc[j]) * q * int(x[b].qs[e]);
        }
        for (int j = 0; j < 8; ++j) {
            mlane[j] = int(m[j]) * (int(x[b].bsums[2 * j]) + int(x[b].bsums[2 * j + 1]));
            msum += mlane[j];
        }
        const float dd = x[b].d * quant::fp16_to_fp32(w[b].d), dm = x[b].d * quant::fp16_to_fp32(w[b].dmin);
        for (int l = 0; l < lanes; ++l) acc[l] = std::fma(dd, float(lane[l]), acc[l]);
        for (int j = 0; j < 8; ++j) macc[j] = std::fma(dm, float(mlane[j]), macc[j]);
        mins = std::fma(dm, float(msum), mins);
    }
    auto hsum8 = [](const float * v) { return ((v[0] + v[4]) + (v[2] + v[6])) + ((v[1] + v[5]) + (v[3] + v[7])); };
    if (lanes == 8) return hsum8(acc) - mins;
    float folded[8];
    for (int l = 0; l < 8; ++l) folded[l] = acc[l] + acc[l + 8];
    return hsum8(folded) - hsum8(macc);
}

} // namespace

// Q4_K and Q6_K take llama.cpp's x86 arithmetic (kernels/ref/matmul-k.cpp, NOTE(k-matmul-ggml)): exact
// integer sums per super-block in ggml's lanes, then its F32 chains — but for Q6_K on the AVX-512 levels, the
// block step of ggml's AMX backend (one exact sum per super-block, one fma: NOTE(q6-k-block-step)). Every level
// must give its reference's bits, batch of one or of several tokens, in every tile shape: a level that rounded
// in another order would part from llama.cpp on real models (measured on Qwen2.5-Coder-0.5B's Q6_K ffn_down
// before the change).
TM_TEST("kernels: Q4_K and Q6_K matmuls are bitwise the reference at every level") {
    std::mt19937 rng(4242);
    // Two widths: Q6_K's prompt tiles are one row with 1536-wide rows and 4 rows with 4864-wide ones
    // (NOTE(k-matmul-tiles)).
    const std::pair<ggml_type, int64_t> cases[] = {{ggml_type::q4_k, 256 * 19}, {ggml_type::q6_k, 256 * 19}, {ggml_type::q6_k, 256 * 6}};
    for (const auto & [type, n_in] : cases) {
        const k_case c(type, rng, n_in);
        int64_t compared = 0;
        for (const variant & v : variants(type)) {
            std::vector<float> y_ref(size_t(k_case::n_out * k_case::max_tok), NAN);
            reference_for(type, v)(c.w.data(), c.w_row, c.xa.data(), c.x_row, k_case::max_tok, c.n_in, 0, k_case::n_out,
                                   y_ref.data(), k_case::n_out);
            const int bad = tile_shape_mismatches(v.fn, c, y_ref);
            if (bad) std::fprintf(stderr, "    type %u, %lld inputs, %s: %d outputs differ from the reference\n", unsigned(type), (long long)n_in, v.name, bad);
            CHECK_EQ(bad, 0);
            ++compared;
        }
        // Every level this run has, the reference included.
        CHECK_EQ(compared, int64_t(variants(type).size()));
        CHECK(compared >= 1);
    }
}

namespace {

// max_tok random activation rows quantized to act, but for two at the int8 extremes: token 0 all token0, token 1
// all 0.9999 after a first element of -1.
std::vector<uint8_t> extreme_activations(ggml_type act, int64_t n_in, int64_t max_tok, float token0, std::mt19937 & rng) {
    std::vector<float> x = make_x(n_in * max_tok, rng);
    for (int64_t i = 0; i < n_in; ++i) {
        x[size_t(i)] = token0;
        x[size_t(n_in + i)] = i == 0 ? -1.0f : 0.9999f;
    }
    const size_t x_row = quant::row_bytes(act, n_in);
    std::vector<uint8_t> xa(x_row * size_t(max_tok));
    for (int64_t t = 0; t < max_tok; ++t) quant::quantize_row(act, x.data() + t * n_in, xa.data() + size_t(t) * x_row, n_in);
    return xa;
}

// The int8 extremes of tokens 0 and 1 that extreme_activations makes, read back from their element 5 (Block:
// the activations' block type): -127 (token 0's value at the largest magnitude) and +127.
template <typename Block>
void check_extremes(const std::vector<uint8_t> & xa, size_t x_row) {
    CHECK_EQ(int(reinterpret_cast<const Block *>(xa.data())->qs[5]), -127);
    CHECK_EQ(int(reinterpret_cast<const Block *>(xa.data() + x_row)->qs[5]), 127);
}

// fn over each of the token counts (the first tokens of xa) and over the rows [0, n_out) and [first, last): the
// outputs that differ from want's bits (n_out per token), plus the rows outside the range that were written.
// The defaults cut a range inside the row tiles; rows repacked 16 at a time take whole groups.
int many_token_mismatches(matmul_rows_fn fn, const std::vector<uint8_t> & w, size_t w_row, const std::vector<uint8_t> & xa,
                          size_t x_row, int64_t n_in, int64_t n_out, const std::vector<float> & want,
                          std::initializer_list<int64_t> counts, int64_t first = 3, int64_t last = 97) {
    int bad = 0;
    for (int64_t n_tok : counts)
        for (const auto & [r0, r1] : {std::pair<int64_t, int64_t>{0, n_out}, {first, last}}) {
            std::vector<float> y(size_t(n_out * n_tok), NAN);
            fn(w.data(), w_row, xa.data(), x_row, n_tok, n_in, r0, r1, y.data(), n_out);
            for (int64_t t = 0; t < n_tok; ++t)
                for (int64_t r = 0; r < n_out; ++r) {
                    const float got = y[size_t(t * n_out + r)];
                    bad += r >= r0 && r < r1 ? std::memcmp(&got, &want[size_t(t * n_out + r)], 4) != 0 : !std::isnan(got);
                }
        }
    return bad;
}

} // namespace

// Many tokens: Q4_K's 16-token lanes on the AVX-512 levels (kernels/simd/avx512-q4-k-lanes.h, NOTE(q4-k-lanes))
// and the tiles of both types elsewhere — groups of 16 tokens in zmm lanes and of at most 8 in ymm lanes, a
// partial last group, more than one pass of 256 tokens, panels that start small and grow over a 100-row range,
// a range that starts inside a tile, and extreme blocks (every quant at its top, every scale at its largest
// magnitude: Q4_K's 63, Q6_K's -128) against activations at -127 and +127, where an overflow of the integer
// sums would show. Every level must give its reference's bits (reference_for).
TM_TEST("kernels: Q4_K and Q6_K matmuls over many tokens are bitwise the reference at every level") {
    std::mt19937 rng(4343);
    const int64_t n_in = 256 * 3, n_out = 100, max_tok = 300;
    const size_t x_row = quant::row_bytes(ggml_type::q8_k, n_in);
    // Token 0 all -127 (Q8_K's scale is negative: x = 1 everywhere), token 1 all +127 but its first element (-127).
    const std::vector<uint8_t> xa = extreme_activations(ggml_type::q8_k, n_in, max_tok, 1.0f, rng);
    check_extremes<quant::block_q8_k>(xa, x_row);
    for (ggml_type type : {ggml_type::q4_k, ggml_type::q6_k}) {
        std::vector<uint8_t> w = make_weights(type, n_out, n_in, rng);
        const size_t w_row = quant::row_bytes(type, n_in);
        for (int64_t r = 0; r < 4; ++r)
            for (int64_t b = 0; b < n_in / quant::qk_k; ++b) {
                if (type == ggml_type::q4_k) {
                    auto * blk = reinterpret_cast<quant::block_q4_k *>(w.data() + size_t(r) * w_row) + b;
                    std::memset(blk->scales, 0xff, sizeof blk->scales);
                    std::memset(blk->qs, 0xff, sizeof blk->qs);
                } else {
                    auto * blk = reinterpret_cast<quant::block_q6_k *>(w.data() + size_t(r) * w_row) + b;
                    std::memset(blk->scales, 0x80, sizeof blk->scales);
                    std::memset(blk->ql, 0xff, sizeof blk->ql);
                    std::memset(blk->qh, 0xff, sizeof blk->qh);
                }
            }
        int64_t compared = 0;
        for (const variant & v : variants(type)) {
            std::vector<float> want(size_t(n_out * max_tok));
            reference_for(type, v)(w.data(), w_row, xa.data(), x_row, max_tok, n_in, 0, n_out, want.data(), n_out);
            const int bad = many_token_mismatches(v.fn, w, w_row, xa, x_row, n_in, n_out, want, {5, 8, 9, 16, 17, 40, 300});
            if (bad) std::fprintf(stderr, "    type %u, %s: %d outputs differ from the reference\n", unsigned(type), v.name, bad);
            CHECK_EQ(bad, 0);
            ++compared;
        }
        CHECK_EQ(compared, int64_t(variants(type).size()));
    }
}

// Q4_1 and Q5_1 over many tokens: on the AVX-512 levels the block step's 16-token lanes from 5 tokens on
// (kernels/simd/avx512-block-step-min.h, NOTE(block-step-min)) and the AMX tiles from 16, elsewhere the tiles —
// groups of 16 tokens in zmm lanes and of at most 8 in ymm lanes, a partial last group, more than one pass of
// 256 tokens, growing panels over a 100-row range, a range starting inside a tile, and extreme blocks (every
// weight at its top, 15 or 31, against activations at -127 and +127) — give every level's one-token bits, so
// no result depends on its batch (kernels-block-step-test.cpp holds the AVX-512 levels to their scalar
// reference too).
TM_TEST("kernels: Q4_1 and Q5_1 matmuls over many tokens give each level's one-token bits") {
    std::mt19937 rng(4545);
    const int64_t n_in = 32 * 20, n_out = 100, max_tok = 300;
    const size_t x_row = quant::row_bytes(ggml_type::q8_1, n_in);
    // Token 0 all -127 (x = -1 everywhere), token 1 all +127 but its first element (-127).
    const std::vector<uint8_t> xa = extreme_activations(ggml_type::q8_1, n_in, max_tok, -1.0f, rng);
    check_extremes<quant::block_q8_1>(xa, x_row);
    for (ggml_type type : {ggml_type::q4_1, ggml_type::q5_1}) {
        std::vector<uint8_t> w = make_weights(type, n_out, n_in, rng);
        const size_t w_row = quant::row_bytes(type, n_in);
        for (int64_t r = 0; r < 4; ++r)
            for (int64_t b = 0; b < n_in / 32; ++b) {
                if (type == ggml_type::q4_1) {
                    std::memset(reinterpret_cast<quant::block_q4_1 *>(w.data() + size_t(r) * w_row)[b].qs, 0xff, sizeof(quant::block_q4_1::qs));
                } else {
                    auto & blk = reinterpret_cast<quant::block_q5_1 *>(w.data() + size_t(r) * w_row)[b];
                    std::memset(blk.qs, 0xff, sizeof blk.qs);
                    std::memset(blk.qh, 0xff, sizeof blk.qh);
                }
            }
        int64_t compared = 0;
        for (const variant & v : variants(type)) {
            std::vector<float> want(size_t(n_out * max_tok));
            for (int64_t t = 0; t < max_tok; ++t)
                v.fn(w.data(), w_row, xa.data() + size_t(t) * x_row, x_row, 1, n_in, 0, n_out, want.data() + t * n_out, n_out);
            const int bad = many_token_mismatches(v.fn, w, w_row, xa, x_row, n_in, n_out, want, {7, 8, 9, 16, 17, 40, 300});
            if (bad) std::fprintf(stderr, "    type %u, %s: %d outputs differ from its one-token bits\n", unsigned(type), v.name, bad);
            CHECK_EQ(bad, 0);
            ++compared;
        }
        CHECK_EQ(compared, int64_t(variants(type).size()));
    }
}

namespace {

// Level l's kernel for a 16-row layout (the table member layout_kernel) on rows packed that way, p_row bytes a row,
// against want's bits: 1 to 4 tokens a tile and the walks for more, over all the rows and over whole groups [16, 80).
void check_x16_level(const tm_test::kernel_level & l, matmul_rows_kernel * kernel_table::*layout_kernel, const std::vector<uint8_t> & packed,
                     size_t p_row, const std::vector<uint8_t> & xa, size_t x_row, int64_t n_in, int64_t n_out, const std::vector<float> & want) {
    const int bad = many_token_mismatches(l.table.*layout_kernel, packed, p_row, xa, x_row, n_in, n_out, want,
                                          {1, 2, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 40, 300}, 16, 80);
    if (bad) std::fprintf(stderr, "    %s: %d outputs differ from the expected bits\n", l.name, bad);
    CHECK_EQ(bad, 0);
}

// Every level's kernel for a 16-row layout against want's bits (check_x16_level).
void check_x16_levels(matmul_rows_kernel * kernel_table::*layout_kernel, const std::vector<uint8_t> & packed, size_t p_row,
                      const std::vector<uint8_t> & xa, size_t x_row, int64_t n_in, int64_t n_out, const std::vector<float> & want) {
    int64_t compared = 0;
    for (const tm_test::kernel_level & l : tm_test::kernel_levels()) {
        check_x16_level(l, layout_kernel, packed, p_row, xa, x_row, n_in, n_out, want);
        ++compared;
    }
    CHECK(compared >= 1);
}

// The AVX-512 levels' variant of a 16-row kernel without the next group's prefetch for one token (NOTE(q4-k-x16-prefetch)), real
// and emulated where this machine runs them, against want's bits as check_x16_levels runs the table's; and, where
// the CPU has AVX-512 (building the table runs that level's fill), the avx512 table (the member layout_kernel)
// takes it on AMD only.
void check_x16_hw_stream(matmul_rows_kernel * kernel_table::*layout_kernel, matmul_rows_fn real, matmul_rows_fn emulated,
                         const std::vector<uint8_t> & packed, size_t p_row, const std::vector<uint8_t> & xa, size_t x_row,
                         int64_t n_in, int64_t n_out, const std::vector<float> & want) {
    const cpu_features & f = cpu_features_get();
    std::vector<std::pair<const char *, matmul_rows_fn>> variants;
    if (f.avx512) variants.push_back({"avx512", real});
    if (f.avx2) variants.push_back({"avx512-emulated", emulated});
    for (const auto & [name, fn] : variants) {
        const int bad = many_token_mismatches(fn, packed, p_row, xa, x_row, n_in, n_out, want, {1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 40, 300}, 16, 80);
        if (bad) std::fprintf(stderr, "    %s without the prefetch: %d outputs differ from the reference\n", name, bad);
        CHECK_EQ(bad, 0);
    }
    if (!f.avx512) return;
    CHECK(kernels_for(isa_level::avx512, cpu_vendor::amd).*layout_kernel == real);
    CHECK(kernels_for(isa_level::avx512, cpu_vendor::intel).*layout_kernel != real);
    CHECK(kernels_for(isa_level::avx512, cpu_vendor::other).*layout_kernel != real);
}

// Which levels ask for a 16-row layout of 32-element blocks: the AVX-512 levels, with the AMX ones or without them,
// and avx2 for the nibble formats it has lanes of (kernels/simd/avx2-nibble-x16.h).
struct x16_askers {
    bool amx;
    bool avx2;
    bool ask(const std::string & level) const {
        if (level == "avx2") return avx2;
        return level.rfind("avx512", 0) == 0 && (amx || level.find("amx") == std::string::npos);
    }
};

// What the tests of those layouts check beyond their own round trip: exactly the askers ask (the table's flag
// `asks`); a level that asks gives with its kernel of the layout (the member layout_kernel) the bits of its kernel of
// the GGUF rows w (the member rows_kernel; those of the AVX-512 levels are block_step's, want), 1 to 4 tokens a tile
// and the walks for more, over all the rows and whole groups [16, 80); every other level's entry of the layout is
// the block-step reference (want); through matmul_prepared_many the machine's table gives the same bits (its own of
// the GGUF rows where it asks, else want) on a 2-thread pool for 1, 3 and 16 tokens; and a repacked weight whose rows are not whole groups is refused.
void check_x16_layout(bool kernel_table::*asks, x16_askers askers, matmul_rows_kernel * kernel_table::*layout_kernel,
                      matmul_rows_kernel * kernel_table::*rows_kernel, ggml_type type, weight_layout layout, const std::vector<uint8_t> & packed,
                      size_t p_row, const std::vector<uint8_t> & w, size_t w_row, const std::vector<uint8_t> & xa, size_t x_row, int64_t n_in,
                      int64_t n_out, int64_t max_tok, const std::vector<float> & want) {
    const auto rows_bits = [&](const kernel_table & t, int64_t n_tok) {
        std::vector<float> y(size_t(n_out * n_tok));
        (t.*rows_kernel)(w.data(), w_row, xa.data(), x_row, n_tok, n_in, 0, n_out, y.data(), n_out);
        return y;
    };
    int64_t compared = 0;
    for (const tm_test::kernel_level & l : tm_test::kernel_levels()) {
        const std::string name = l.name;
        const bool asking = askers.ask(name);
        CHECK_EQ(l.table.*asks, asking);
        const std::vector<float> level_want = asking ? rows_bits(l.table, max_tok) : want;
        if (name.rfind("avx512", 0) == 0) CHECK(std::memcmp(level_want.data(), want.data(), want.size() * sizeof(float)) == 0);
        check_x16_level(l, layout_kernel, packed, p_row, xa, x_row, n_in, n_out, level_want);
        ++compared;
    }
    CHECK(compared >= 1);
    thread_pool pool(2);
    for (int64_t n_tok : {1, 3, 16}) {
        std::vector<float> y_x16(size_t(n_out * n_tok));
        const matmul_part x16{type, packed.data(), n_out, y_x16.data(), layout};
        matmul_prepared_many(pool, kernels_get(), &x16, 1, n_in, xa.data(), n_tok);
        if (kernels_get().*asks) CHECK(y_x16 == rows_bits(kernels_get(), n_tok));
        else CHECK(std::memcmp(y_x16.data(), want.data(), y_x16.size() * sizeof(float)) == 0);
    }
    std::vector<float> y_partial(static_cast<size_t>(n_out));
    const matmul_part partial{type, packed.data(), n_out - 8, y_partial.data(), layout};
    CHECK_THROWS_CODE(matmul_prepared_many(pool, kernels_get(), &partial, 1, n_in, xa.data(), 1), invalid_argument);
}

} // namespace

// Q4_K repacked 16 rows at a time at load (quant/q4-k-x16.h): the repacking gives the file's blocks back bit
// for bit, and every level's matmul_q4_k_x16 — on AVX-512 its GEMV, 1 to 4 tokens a tile, cache blocked over
// panels of groups for more (NOTE(q4-k-x16)); elsewhere the reference — gives the GGUF layout's reference bits
// for every token count and every range of whole groups, extreme blocks included, and so does the AVX-512 levels'
// variant without the next group's prefetch, which the avx512 table takes on AMD's CPUs only
// (check_x16_hw_stream); through matmul_prepared_many the repacked weight equals the GGUF one on a 2-thread pool.
TM_TEST("kernels: Q4_K rows repacked 16 at a time give the GGUF layout's bits at every level") {
    std::mt19937 rng(4444);
    const int64_t n_in = 256 * 5, n_out = 96, max_tok = 300, nb = n_in / quant::qk_k;
    const size_t x_row = quant::row_bytes(ggml_type::q8_k, n_in), w_row = quant::row_bytes(ggml_type::q4_k, n_in);
    const size_t p_row = quant::q4_k_x16_row_bytes(n_in);
    std::vector<float> x = make_x(n_in * max_tok, rng);
    for (int64_t i = 0; i < n_in; ++i) x[size_t(i)] = i % 2 ? 1.0f : -1.0f;   // token 0 at +-127
    std::vector<uint8_t> xa(x_row * size_t(max_tok));
    for (int64_t t = 0; t < max_tok; ++t) quant::quantize_row(ggml_type::q8_k, x.data() + t * n_in, xa.data() + size_t(t) * x_row, n_in);
    std::vector<uint8_t> w = make_weights(ggml_type::q4_k, n_out, n_in, rng);
    for (int64_t r : {0, 5, 17, 95})
        for (int64_t b = 0; b < nb; ++b) {
            auto * blk = reinterpret_cast<quant::block_q4_k *>(w.data() + size_t(r) * w_row) + b;
            std::memset(blk->scales, 0xff, sizeof blk->scales);
            std::memset(blk->qs, 0xff, sizeof blk->qs);
        }
    std::vector<uint8_t> packed(p_row * size_t(n_out)), back(w.size());
    for (int64_t g = 0; g < n_out; g += quant::k_x16_rows) {
        quant::q4_k_x16_pack(w.data() + size_t(g) * w_row, w_row, nb, reinterpret_cast<quant::block_q4_k_x16 *>(packed.data() + size_t(g) * p_row));
        quant::q4_k_x16_unpack(reinterpret_cast<const quant::block_q4_k_x16 *>(packed.data() + size_t(g) * p_row), nb, back.data() + size_t(g) * w_row, w_row);
    }
    CHECK(back == w);

    std::vector<float> want(size_t(n_out * max_tok));
    ref::matmul_q4_k(w.data(), w_row, xa.data(), x_row, max_tok, n_in, 0, n_out, want.data(), n_out);
    check_x16_levels(&kernel_table::matmul_q4_k_x16, packed, p_row, xa, x_row, n_in, n_out, want);
    check_x16_hw_stream(&kernel_table::matmul_q4_k_x16, avx512::matmul_q4_k_x16_hw_stream, avx512_emulated::matmul_q4_k_x16_hw_stream,
                        packed, p_row, xa, x_row, n_in, n_out, want);
    if (cpu_features_get().avx512) CHECK(kernels_for(isa_level::avx512, cpu_vendor::intel).matmul_q4_k_x16 == avx512::matmul_q4_k_x16);
    if (cpu_features_get().avx2) CHECK(kernels_for(isa_level::avx2, cpu_vendor::amd).matmul_q4_k_x16 == avx2::matmul_q4_k_x16);

    thread_pool pool(2);
    for (int64_t n_tok : {1, 3, 16}) {
        std::vector<float> y_gguf(size_t(n_out * n_tok)), y_x16(size_t(n_out * n_tok));
        const matmul_part gguf{ggml_type::q4_k, w.data(), n_out, y_gguf.data()};
        const matmul_part x16{ggml_type::q4_k, packed.data(), n_out, y_x16.data(), weight_layout::q4_k_x16};
        matmul_prepared_many(pool, kernels_get(), &gguf, 1, n_in, xa.data(), n_tok);
        matmul_prepared_many(pool, kernels_get(), &x16, 1, n_in, xa.data(), n_tok);
        CHECK(std::memcmp(y_gguf.data(), y_x16.data(), y_gguf.size() * sizeof(float)) == 0);
    }
    // A repacked weight whose rows are not whole groups is refused.
    std::vector<float> y_partial(static_cast<size_t>(n_out));
    const matmul_part partial{ggml_type::q4_k, packed.data(), n_out - 8, y_partial.data(), weight_layout::q4_k_x16};
    CHECK_THROWS_CODE(matmul_prepared_many(pool, kernels_get(), &partial, 1, n_in, xa.data(), 1), invalid_argument);
}

// Q6_K repacked 16 rows at a time at load for the avx512 level (quant/q6-k-x16.h): the repacking gives the file's
// blocks back bit for bit, and every level's matmul_q6_k_x16 — the avx512 level's 16-row kernel, 1 to 4 tokens a
// tile, cache blocked over panels of groups for more (NOTE(q6-k-x16)); elsewhere the reference — gives the block
// step's bits (block_step_ref::matmul_q6_k on the GGUF rows) for every token count and every range of whole
// groups, with blocks at both ends of the levels (every level 63 and every level 0, the scales at -128) against
// activations at -127 and +127, and so does the variant without the next group's prefetch that the avx512 table
// takes on AMD (check_x16_hw_stream); only the avx512 level asks for the layout; through matmul_prepared_many a
// repacked weight gives the same bits on a 2-thread pool.
TM_TEST("kernels: Q6_K rows repacked 16 at a time give the block step's bits at every level") {
    std::mt19937 rng(6616);
    const int64_t n_in = 256 * 5, n_out = 96, max_tok = 300, nb = n_in / quant::qk_k;
    const size_t x_row = quant::row_bytes(ggml_type::q8_k, n_in), w_row = quant::row_bytes(ggml_type::q6_k, n_in);
    const size_t p_row = quant::q6_k_x16_row_bytes(n_in);
    CHECK_EQ(p_row, size_t(212 * nb));
    const std::vector<uint8_t> xa = extreme_activations(ggml_type::q8_k, n_in, max_tok, 1.0f, rng);
    check_extremes<quant::block_q8_k>(xa, x_row);
    std::vector<uint8_t> w = make_weights(ggml_type::q6_k, n_out, n_in, rng);
    for (int64_t r : {0, 5, 17, 95, 40, 63})
        for (int64_t b = 0; b < nb; ++b) {
            auto * blk = reinterpret_cast<quant::block_q6_k *>(w.data() + size_t(r) * w_row) + b;
            const uint8_t level = r < 20 || r == 95 ? 0xff : 0x00;
            std::memset(blk->scales, 0x80, sizeof blk->scales);
            std::memset(blk->ql, level, sizeof blk->ql);
            std::memset(blk->qh, level, sizeof blk->qh);
        }
    std::vector<uint8_t> packed(p_row * size_t(n_out));
    bool round_trip = true;
    for (int64_t g = 0; g < n_out; g += quant::k_x16_rows) {
        auto * group = reinterpret_cast<quant::block_q6_k_x16 *>(packed.data() + size_t(g) * p_row);
        quant::q6_k_x16_pack(w.data() + size_t(g) * w_row, w_row, nb, group);
        for (int r = 0; r < quant::k_x16_rows; ++r)
            for (int64_t b = 0; b < nb; ++b) {
                const quant::block_q6_k back = quant::q6_k_x16_row(group[b], r);
                round_trip = round_trip && std::memcmp(&back, w.data() + size_t(g + r) * w_row + size_t(b) * sizeof back, sizeof back) == 0;
            }
    }
    CHECK(round_trip);

    std::vector<float> want(size_t(n_out * max_tok));
    block_step_ref::matmul_q6_k(w.data(), w_row, xa.data(), x_row, max_tok, n_in, 0, n_out, want.data(), n_out);
    check_x16_layout(&kernel_table::q6_k_x16, {false, false}, &kernel_table::matmul_q6_k_x16, &kernel_table::matmul_q6_k, ggml_type::q6_k,
                     weight_layout::q6_k_x16, packed, p_row, w, w_row, xa, x_row, n_in, n_out, max_tok, want);
    check_x16_hw_stream(&kernel_table::matmul_q6_k_x16, avx512::matmul_q6_k_x16_hw_stream, avx512_emulated::matmul_q6_k_x16_hw_stream,
                        packed, p_row, xa, x_row, n_in, n_out, want);
    if (cpu_features_get().avx512) CHECK(kernels_for(isa_level::avx512, cpu_vendor::intel).matmul_q6_k_x16 == avx512::matmul_q6_k_x16);
    // A type the layout does not hold is refused.
    CHECK_THROWS_CODE(matmul_rows_for(kernels_get(), ggml_type::q4_k, weight_layout::q6_k_x16), invalid_argument);
}

// Q4_1 repacked 16 rows at a time at load for the AVX-512 and avx2 levels (quant/q4-1-x16.h): the repacking gives the
// file's blocks back bit for bit, and every level's matmul_q4_1_x16 — the avx512 level's lanes, 1 to 16 tokens, and its
// prompt tile on panels decoded from the groups for more (NOTE(nibble-x16)), the AMX tiles from 16 tokens on, avx2's
// transposed accumulators in llama.cpp's order (NOTE(nibble-x16-avx2)); elsewhere the reference — gives its level's
// bits of the GGUF rows (on the AVX-512 levels block_step_ref::matmul_q4_1's) for every token count (a partial 16-token group,
// more than one pass of 256 tokens) and every range of whole groups (panels that start at 16 rows and grow), with
// blocks at both ends of the levels (every nibble 15 or 0, the largest scales and minimums) against activations at
// -127 and +127; only those levels ask for the layout; through matmul_prepared_many a repacked weight gives the same
// bits on a 2-thread pool.
TM_TEST("kernels: Q4_1 rows repacked 16 at a time give each level's bits of the GGUF rows") {
    std::mt19937 rng(4116);
    const int64_t n_in = 32 * 13, n_out = 96, max_tok = 300, nb = n_in / quant::qk4_1;
    const size_t x_row = quant::row_bytes(ggml_type::q8_1, n_in), w_row = quant::row_bytes(ggml_type::q4_1, n_in);
    const std::vector<uint8_t> xa = extreme_activations(ggml_type::q8_1, n_in, max_tok, -1.0f, rng);
    check_extremes<quant::block_q8_1>(xa, x_row);
    std::vector<uint8_t> w = make_weights(ggml_type::q4_1, n_out, n_in, rng);
    for (int64_t r : {0, 5, 17, 95, 40, 63})
        for (int64_t b = 0; b < nb; ++b) {
            auto * blk = reinterpret_cast<quant::block_q4_1 *>(w.data() + size_t(r) * w_row) + b;
            std::memset(blk->qs, r < 20 || r == 95 ? 0xff : 0x00, sizeof blk->qs);
            blk->d = 0x7bff;                      // the largest finite F16
            blk->m = r % 2 ? 0xfbff : 0x7bff;     // and its negative
        }
    std::vector<uint8_t> packed(w.size());
    bool round_trip = true;
    for (int64_t g = 0; g < n_out; g += quant::k_x16_rows) {
        auto * group = reinterpret_cast<quant::block_q4_1_x16 *>(packed.data() + size_t(g) * w_row);
        quant::q4_1_x16_pack(w.data() + size_t(g) * w_row, w_row, nb, group);
        for (int r = 0; r < quant::k_x16_rows; ++r)
            for (int64_t b = 0; b < nb; ++b) {
                const quant::block_q4_1 back = quant::q4_1_x16_row_block(group[b], r);
                round_trip = round_trip && std::memcmp(&back, w.data() + size_t(g + r) * w_row + size_t(b) * sizeof back, sizeof back) == 0;
            }
    }
    CHECK(round_trip);

    std::vector<float> want(size_t(n_out * max_tok));
    block_step_ref::matmul_q4_1(w.data(), w_row, xa.data(), x_row, max_tok, n_in, 0, n_out, want.data(), n_out);
    check_x16_layout(&kernel_table::q4_1_x16, {true, true}, &kernel_table::matmul_q4_1_x16, &kernel_table::matmul_q4_1, ggml_type::q4_1,
                     weight_layout::q4_1_x16, packed, w_row, w, w_row, xa, x_row, n_in, n_out, max_tok, want);
    // A type the layout does not hold is refused.
    CHECK_THROWS_CODE(matmul_rows_for(kernels_get(), ggml_type::q4_0, weight_layout::q4_1_x16), invalid_argument);
}

// Q4_0 and IQ4_NL repacked 16 rows at a time at load for the AVX-512 and avx2 levels (quant/q4-0-x16.h, two blocks a
// group entry): as the Q4_1 test above — the blocks back bit for bit, every level's entry of the layout (the avx512
// lanes up to 16 tokens, the prompt tile on panels decoded from the groups or the AMX tiles for more, avx2's
// transposed accumulators; elsewhere the reference) against its level's bits of the GGUF rows (every nibble 15 or 0:
// Q4_0's levels 7 and -8, IQ4_NL's 113 and -127, at the largest scale, against activations at -127 and +127), only
// those levels asking for the layout, the same bits through matmul_prepared_many, and a width that is not whole
// block pairs or a type the layout does not hold refused.
TM_TEST("kernels: Q4_0 and IQ4_NL rows repacked 16 at a time give each level's bits of the GGUF rows") {
    std::mt19937 rng(4016);
    const int64_t n_in = 32 * 14, n_out = 96, max_tok = 300, nb = n_in / quant::qk4_0;
    const size_t x_row = quant::row_bytes(ggml_type::q8_0, n_in);
    const std::vector<uint8_t> xa = extreme_activations(ggml_type::q8_0, n_in, max_tok, -1.0f, rng);
    check_extremes<quant::block_q8_0>(xa, x_row);
    struct kind {
        ggml_type type;
        matmul_rows_kernel * reference;
        matmul_rows_kernel * kernel_table::*entry;
        matmul_rows_kernel * kernel_table::*rows;
    };
    for (const kind & k : {kind{ggml_type::q4_0, block_step_ref::matmul_q4_0, &kernel_table::matmul_q4_0_x16, &kernel_table::matmul_q4_0},
                           kind{ggml_type::iq4_nl, block_step_ref::matmul_iq4_nl, &kernel_table::matmul_iq4_nl_x16, &kernel_table::matmul_iq4_nl}}) {
        const size_t w_row = quant::row_bytes(k.type, n_in);
        std::vector<uint8_t> w = make_weights(k.type, n_out, n_in, rng);
        for (int64_t r : {0, 5, 17, 95, 40, 63})
            for (int64_t b = 0; b < nb; ++b) {
                auto * blk = reinterpret_cast<quant::block_q4_0 *>(w.data() + size_t(r) * w_row) + b;
                std::memset(blk->qs, r < 20 || r == 95 ? 0xff : 0x00, sizeof blk->qs);
                blk->d = r % 2 ? 0xfbff : 0x7bff;   // the largest finite F16, and its negative
            }
        std::vector<uint8_t> packed(w.size());
        bool round_trip = true;
        for (int64_t g = 0; g < n_out; g += quant::k_x16_rows) {
            auto * group = reinterpret_cast<quant::block_q4_0_x16 *>(packed.data() + size_t(g) * w_row);
            quant::q4_0_x16_pack(w.data() + size_t(g) * w_row, w_row, nb, group);
            for (int r = 0; r < quant::k_x16_rows; ++r)
                for (int64_t b = 0; b < nb; ++b) {
                    const quant::block_q4_0 back = quant::q4_0_x16_row_block(group, b, r);
                    round_trip = round_trip && std::memcmp(&back, w.data() + size_t(g + r) * w_row + size_t(b) * sizeof back, sizeof back) == 0;
                }
        }
        CHECK(round_trip);

        std::vector<float> want(size_t(n_out * max_tok));
        k.reference(w.data(), w_row, xa.data(), x_row, max_tok, n_in, 0, n_out, want.data(), n_out);
        check_x16_layout(&kernel_table::q4_0_x16, {true, true}, k.entry, k.rows, k.type, weight_layout::q4_0_x16, packed, w_row, w, w_row, xa, x_row,
                         n_in, n_out, max_tok, want);
        thread_pool pool(1);
        std::vector<float> y_odd(static_cast<size_t>(n_out));
        const matmul_part odd{k.type, packed.data(), n_out, y_odd.data(), weight_layout::q4_0_x16};
        CHECK_THROWS_CODE(matmul_prepared_many(pool, kernels_get(), &odd, 1, n_in - 32, xa.data(), 1), invalid_argument);
    }
    CHECK_THROWS_CODE(matmul_rows_for(kernels_get(), ggml_type::q4_1, weight_layout::q4_0_x16), invalid_argument);
}

// Q5_0 repacked 16 rows at a time at load for the AVX-512 and avx2 levels (quant/q5-0-x16.h: two blocks a group entry,
// each with its rows' fifth bits): as the Q4_0 test above (avx2's transposed accumulators against its tiles of the
// GGUF rows), with every level at 31 (nibble 15 and fifth bit set: the weight 15) or at 0 (-16) at the largest scale
// against activations at -127 and +127, and random fifth bits in the other rows.
TM_TEST("kernels: Q5_0 rows repacked 16 at a time give each level's bits of the GGUF rows") {
    std::mt19937 rng(5016);
    const int64_t n_in = 32 * 14, n_out = 96, max_tok = 300, nb = n_in / quant::qk5_0;
    const size_t x_row = quant::row_bytes(ggml_type::q8_0, n_in), w_row = quant::row_bytes(ggml_type::q5_0, n_in);
    const std::vector<uint8_t> xa = extreme_activations(ggml_type::q8_0, n_in, max_tok, -1.0f, rng);
    check_extremes<quant::block_q8_0>(xa, x_row);
    std::vector<uint8_t> w = make_weights(ggml_type::q5_0, n_out, n_in, rng);
    for (int64_t r : {0, 5, 17, 95, 40, 63})
        for (int64_t b = 0; b < nb; ++b) {
            auto * blk = reinterpret_cast<quant::block_q5_0 *>(w.data() + size_t(r) * w_row) + b;
            const uint8_t level = r < 20 || r == 95 ? 0xff : 0x00;
            std::memset(blk->qs, level, sizeof blk->qs);
            std::memset(blk->qh, level, sizeof blk->qh);
            blk->d = r % 2 ? 0xfbff : 0x7bff;   // the largest finite F16, and its negative
        }
    std::vector<uint8_t> packed(w.size());
    bool round_trip = true;
    for (int64_t g = 0; g < n_out; g += quant::k_x16_rows) {
        auto * group = reinterpret_cast<quant::block_q5_0_x16 *>(packed.data() + size_t(g) * w_row);
        quant::q5_0_x16_pack(w.data() + size_t(g) * w_row, w_row, nb, group);
        for (int r = 0; r < quant::k_x16_rows; ++r)
            for (int64_t b = 0; b < nb; ++b) {
                const quant::block_q5_0 back = quant::q5_0_x16_row_block(group, b, r);
                round_trip = round_trip && std::memcmp(&back, w.data() + size_t(g + r) * w_row + size_t(b) * sizeof back, sizeof back) == 0;
            }
    }
    CHECK(round_trip);

    std::vector<float> want(size_t(n_out * max_tok));
    block_step_ref::matmul_q5_0(w.data(), w_row, xa.data(), x_row, max_tok, n_in, 0, n_out, want.data(), n_out);
    check_x16_layout(&kernel_table::q5_0_x16, {true, true}, &kernel_table::matmul_q5_0_x16, &kernel_table::matmul_q5_0, ggml_type::q5_0,
                     weight_layout::q5_0_x16, packed, w_row, w, w_row, xa, x_row, n_in, n_out, max_tok, want);
    thread_pool pool(1);
    std::vector<float> y_odd(static_cast<size_t>(n_out));
    const matmul_part odd{ggml_type::q5_0, packed.data(), n_out, y_odd.data(), weight_layout::q5_0_x16};
    CHECK_THROWS_CODE(matmul_prepared_many(pool, kernels_get(), &odd, 1, n_in - 32, xa.data(), 1), invalid_argument);
    CHECK_THROWS_CODE(matmul_rows_for(kernels_get(), ggml_type::q4_0, weight_layout::q5_0_x16), invalid_argument);
}

// Q5_K's float accumulator width is the ISA's (NOTE(k-matmul)), so its levels are held to their own orders,
// bit for bit, in every tile shape: the baseline to the reference, AVX2 to the 8-lane model above, the AVX-512
// levels (real, emulated, and with AMX, which leaves the K-quants to AVX-512) to the 16-lane model.
TM_TEST("kernels: Q5_K matmuls give each level's lane order bit for bit in every tile shape") {
    std::mt19937 rng(5150);
    const k_case c(ggml_type::q5_k, rng);
    const int64_t nb = c.n_in / quant::qk_k;
    int64_t compared = 0;
    for (const tm_test::kernel_level & l : tm_test::kernel_levels()) {
        const bool base = std::string(l.name) == "baseline";
        const int lanes = std::string(l.name) == "avx2" ? 8 : 16;
        CHECK(base || lanes == 8 || std::string(l.name).rfind("avx512", 0) == 0);
        std::vector<float> want(size_t(k_case::n_out * k_case::max_tok), NAN);
        if (base) {
            ref::matmul_q5_k(c.w.data(), c.w_row, c.xa.data(), c.x_row, k_case::max_tok, c.n_in, 0, k_case::n_out, want.data(), k_case::n_out);
        } else {
            for (int64_t t = 0; t < k_case::max_tok; ++t)
                for (int64_t r = 0; r < k_case::n_out; ++r)
                    want[size_t(t * k_case::n_out + r)] = q5_k_lanes_model(
                        reinterpret_cast<const quant::block_q5_k *>(c.w.data() + size_t(r) * c.w_row),
                        reinterpret_cast<const quant::block_q8_k *>(c.xa.data() + size_t(t) * c.x_row), nb, lanes);
        }
        const int bad = tile_shape_mismatches(l.table.matmul_q5_k, c, want);
        if (bad) std::fprintf(stderr, "    %s: %d Q5_K outputs differ from its %d-lane order\n", l.name, bad, base ? 0 : lanes);
        CHECK_EQ(bad, 0);
        ++compared;
    }
    CHECK_EQ(compared, int64_t(tm_test::kernel_levels().size()));
}
