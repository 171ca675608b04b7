// The AVX-512 kernels under SIMDe emulation (test/cpp/kernel-levels.h) compute what the real AVX-512 kernels
// compute, bit for bit, so the emulated level's results against the reference (the other kernels tests) stand
// for the real level's on a machine without AVX-512. Where the CPU has AVX-512, every entry runs on both and
// the outputs are compared; where it does not, this test says so and the report names the level not run.
#include "check.h"
#include "kernel-levels.h"

#include "kernels/matmul.h"
#include "quant/fp16.h"
#include "quant/quant.h"

#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace tmill;
using namespace tmill::kernels;

namespace {

const kernel_table * level(const char * name) {
    for (const tm_test::kernel_level & l : tm_test::kernel_levels())
        if (std::string(l.name) == name) return &l.table;
    return nullptr;
}

template <typename T>
int differing(const std::vector<T> & a, const std::vector<T> & b) {
    int n = 0;
    for (size_t i = 0; i < a.size(); ++i) n += std::memcmp(&a[i], &b[i], sizeof(T)) != 0;
    return n;
}

} // namespace

TM_TEST("kernels: the emulated AVX-512 level equals the real one bit for bit") {
    const kernel_table * emu = level("avx512-emulated");
    const kernel_table * real = level("avx512");
    CHECK(emu != nullptr || level("avx2") == nullptr);   // the emulated level runs wherever AVX2 does
    if (!emu || !real) {
        std::printf("  (no %s level on this machine: nothing to compare)\n", emu ? "real avx512" : "avx512-emulated");
        return;
    }
    std::mt19937 rng(21);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    auto random = [&](size_t n, float scale) {
        std::vector<float> v(n);
        for (auto & x : v) x = normal(rng) * scale;
        return v;
    };
    // Matmuls of every type, odd shapes (tails, every tile shape).
    for (ggml_type type : {ggml_type::f32, ggml_type::f16, ggml_type::bf16, ggml_type::q8_0, ggml_type::q4_0,
                           ggml_type::q4_k, ggml_type::q5_k, ggml_type::q6_k}) {
        const bool k = type == ggml_type::q4_k || type == ggml_type::q5_k || type == ggml_type::q6_k;
        const bool q = type == ggml_type::q8_0 || type == ggml_type::q4_0;
        const int64_t n_in = k ? 512 : q ? 32 * 9 : 100, n_out = 19, n_tok = 7;
        const ggml_type act = quant::activation_type(type);
        const size_t wrow = quant::row_bytes(type, n_in), xrow = quant::row_bytes(act, n_in);
        std::vector<uint8_t> w(wrow * n_out), x(xrow * n_tok);
        const std::vector<float> wf = random(size_t(n_in * n_out), 1.0f), xf = random(size_t(n_in * n_tok), 1.0f);
        if (k) {
            // K-quant weights as random bytes (every pattern is a valid block) with small positive F16 scales.
            std::uniform_int_distribution<int> byte(0, 255);
            for (auto & b : w) b = uint8_t(byte(rng));
            const size_t block = quant::type_block_bytes(type);
            const uint16_t d = quant::fp32_to_fp16(0.004f);
            for (size_t off = 0; off < w.size(); off += block) {
                std::memcpy(&w[off + (type == ggml_type::q6_k ? block - 2 : 0)], &d, 2);
                if (type != ggml_type::q6_k) std::memcpy(&w[off + 2], &d, 2);
            }
        } else {
            for (int64_t r = 0; r < n_out; ++r) quant::quantize_row(type, wf.data() + r * n_in, w.data() + r * wrow, n_in);
        }
        for (int64_t t = 0; t < n_tok; ++t) quant::quantize_row(act, xf.data() + t * n_in, x.data() + t * xrow, n_in);
        std::vector<float> a(size_t(n_out * n_tok)), b(a.size());
        matmul_rows_for(*real, type)(w.data(), wrow, x.data(), xrow, n_tok, n_in, 0, n_out, a.data(), n_out);
        matmul_rows_for(*emu, type)(w.data(), wrow, x.data(), xrow, n_tok, n_in, 0, n_out, b.data(), n_out);
        const int d = differing(a, b);
        if (d) std::fprintf(stderr, "    matmul type %u: %d outputs differ\n", unsigned(type), d);
        CHECK_EQ(d, 0);
    }
    // Row operations, the quantizer and rope over lengths with tails.
    for (int64_t n : {int64_t(1), int64_t(17), int64_t(96), int64_t(173)}) {
        const std::vector<float> x = random(size_t(n), 3.0f), w = random(size_t(n), 1.0f), s = random(size_t(n), 30.0f);
        for (auto op : {0, 1, 2}) {
            std::vector<float> a(static_cast<size_t>(n)), b(static_cast<size_t>(n));
            const kernel_table * t[2] = {real, emu};
            std::vector<float> * out[2] = {&a, &b};
            for (int i = 0; i < 2; ++i) {
                if (op == 0) t[i]->rmsnorm(x.data(), w.data(), out[i]->data(), n, 1e-5f);
                if (op == 1) t[i]->silu_mul(s.data(), w.data(), out[i]->data(), n);
                if (op == 2) t[i]->add(x.data(), w.data(), out[i]->data(), n);
            }
            CHECK_EQ(differing(a, b), 0);
        }
    }
    {
        const std::vector<float> x = random(32 * 12, 5.0f);
        std::vector<uint8_t> a(12 * 34), b(12 * 34);
        real->quantize_q8_0(x.data(), a.data(), 32 * 12);
        emu->quantize_q8_0(x.data(), b.data(), 32 * 12);
        CHECK(a == b);
        const int32_t pos[3] = {0, 5, 12345};
        for (rope_style style : {rope_style::normal, rope_style::neox}) {
            std::vector<float> ra = random(3 * 2 * 80, 2.0f), rb = ra;
            real->rope(ra.data(), 3, 2, 80, 68, pos, 10000.0f, 1.0f, nullptr, style);
            emu->rope(rb.data(), 3, 2, 80, 68, pos, 10000.0f, 1.0f, nullptr, style);
            CHECK_EQ(differing(ra, rb), 0);
        }
    }
    // Attention over a contiguous F16 cache, head dims with and without leftovers, grouped and single.
    for (int64_t hd : {int64_t(24), int64_t(32), int64_t(64), int64_t(128)}) {
        const int32_t n_ctx = 37, n_heads = 3;
        std::vector<uint16_t> kv(size_t(2 * n_ctx * hd));
        for (auto & h : kv) h = quant::fp32_to_fp16(normal(rng));
        std::vector<int32_t> table(1, 0);
        const std::vector<float> q = random(size_t(n_heads * hd), 2.0f);
        std::vector<float> a(size_t(n_heads * hd)), b(a.size()), scratch(attend_f16_heads_scratch(n_heads, hd));
        real->attend_f16_heads(q.data(), n_heads, hd, 0.125f, 0.0f, n_ctx, table.data(), n_ctx, kv.data(), kv.data() + n_ctx * hd,
                               0, size_t(hd), a.data(), scratch.data());
        emu->attend_f16_heads(q.data(), n_heads, hd, 0.125f, 0.0f, n_ctx, table.data(), n_ctx, kv.data(), kv.data() + n_ctx * hd,
                              0, size_t(hd), b.data(), scratch.data());
        CHECK_EQ(differing(a, b), 0);
        real->attend_f16(q.data(), hd, 0.125f, 0.0f, n_ctx, table.data(), n_ctx, kv.data(), kv.data() + n_ctx * hd, 0, size_t(hd),
                         a.data(), scratch.data());
        emu->attend_f16(q.data(), hd, 0.125f, 0.0f, n_ctx, table.data(), n_ctx, kv.data(), kv.data() + n_ctx * hd, 0, size_t(hd),
                        b.data(), scratch.data());
        CHECK_EQ(differing(a, b), 0);
    }
}
