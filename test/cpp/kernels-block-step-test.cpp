// The block-step matmuls (docs/kernels.md, "Matrix products" and "The AMX path") and the AMX tiles: the scalar
// tile emulator faults wherever the hardware would, and the Q8_0, Q4_0, IQ4_NL, Q5_0, Q4_1 and Q5_1 matmuls of every
// AVX-512 level — avx512 and avx512+amx, each for real where the CPU has it and emulated (SIMDe, and the tile
// emulator) on every machine with AVX2 — give bit for bit the scalar reference of their numerics
// (kernels/block-step/step.h, block_step_ref) for every token count, row range, K and thread count (so a row's
// result never depends on its batch, and the avx512 and avx512+amx levels compute the same bits), and stay
// near the baseline's reference. The weights and activations end at an inaccessible page, so a load past a
// row's end faults here.
#include "check.h"
#include "kernel-levels.h"

#include "base/cpu-features.h"
#include "base/thread-pool.h"
#include "kernels/amx/amx.h"
#include "kernels/block-step/reference.h"
#include "kernels/block-step/step.h"
#include "kernels/amx/tile-emulator.h"
#include "kernels/matmul.h"
#include "quant/fp16.h"
#include "quant/q8-0.h"
#include "quant/q8-0-x16.h"
#include "quant/q8-1.h"
#include "quant/quant.h"

#include <cpuid.h>
#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

using namespace tmill;
using namespace tmill::kernels;

namespace {

namespace emu = tile_emulator;

template <typename F>
bool faults(F && f) {
    try {
        f();
    } catch (const emu::fault &) {
        return true;
    }
    return false;
}

// n bytes ending exactly where a PROT_NONE page begins: reading one byte past the end is a SIGSEGV.
class guarded_bytes {
public:
    explicit guarded_bytes(size_t n) : n_(n) {
        const size_t page = size_t(sysconf(_SC_PAGESIZE));
        total_ = (n + page - 1) / page * page + page;
        void * p = mmap(nullptr, total_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        TM_CHECK(p != MAP_FAILED, internal, "guarded_bytes: mmap failed");
        base_ = static_cast<uint8_t *>(p);
        TM_CHECK(mprotect(base_ + total_ - page, page, PROT_NONE) == 0, internal, "guarded_bytes: mprotect failed");
    }
    ~guarded_bytes() { munmap(base_, total_); }
    guarded_bytes(const guarded_bytes &) = delete;
    guarded_bytes & operator=(const guarded_bytes &) = delete;
    uint8_t * data() const { return base_ + (total_ - size_t(sysconf(_SC_PAGESIZE)) - n_); }

private:
    size_t n_, total_;
    uint8_t * base_;
};

// Raw Q8_0 blocks over the whole int8 range (weights -128..127, activations -127..127 as the quantizer makes
// them; a quarter at the extremes) with random F16 scales.
std::vector<quant::block_q8_0> raw_blocks(size_t n, bool weights, std::mt19937 & rng) {
    std::uniform_int_distribution<int> wbyte(-128, 127), xbyte(-127, 127), pick(0, 3);
    std::uniform_real_distribution<float> scale(0.01f, 0.1f);
    std::vector<quant::block_q8_0> blocks(n);
    for (auto & b : blocks) {
        b.d = quant::fp32_to_fp16(scale(rng));
        for (auto & q : b.qs) {
            const int e = pick(rng);
            q = int8_t(e == 0 ? (weights ? -128 : -127) : e == 1 ? 127 : weights ? wbyte(rng) : xbyte(rng));
        }
    }
    return blocks;
}

// The levels that compute the block-step numerics for these types: avx512 and avx512+amx, real or emulated.
std::vector<const tm_test::kernel_level *> block_step_levels() {
    std::vector<const tm_test::kernel_level *> out;
    for (const tm_test::kernel_level & l : tm_test::kernel_levels())
        if (std::strncmp(l.name, "avx512", 6) == 0) out.push_back(&l);
    return out;
}

std::vector<const tm_test::kernel_level *> amx_levels() {
    std::vector<const tm_test::kernel_level *> out;
    for (const tm_test::kernel_level & l : tm_test::kernel_levels())
        if (std::strncmp(l.name, "avx512+amx", 10) == 0) out.push_back(&l);
    return out;
}

const tm_test::kernel_level * level_named(const char * name) {
    for (const tm_test::kernel_level & l : tm_test::kernel_levels())
        if (std::strcmp(l.name, name) == 0) return &l;
    return nullptr;
}

tile_config config_of(std::initializer_list<std::array<int, 3>> tiles) {   // {tmm, rows, colsb}
    tile_config c;
    std::memset(&c, 0, sizeof c);
    c.palette_id = 1;
    for (const auto & t : tiles) {
        c.rows[t[0]] = uint8_t(t[1]);
        c.colsb[t[0]] = uint16_t(t[2]);
    }
    return c;
}

} // namespace

TM_TEST("kernels: the AMX tile emulator faults wherever the hardware would") {
    emu::release();
    CHECK(faults([] { emu::zero(0); }));   // no LDTILECFG yet
    const tile_config good = config_of({{0, 16, 4}, {1, 1, 64}, {2, 16, 64}});
    auto bad_config = [&](auto && change) {
        tile_config c = good;
        change(c);
        return faults([&] { emu::loadconfig(&c); });
    };
    CHECK(!bad_config([](tile_config &) {}));
    CHECK(bad_config([](tile_config & c) { c.palette_id = 0; }));
    CHECK(bad_config([](tile_config & c) { c.palette_id = 2; }));
    CHECK(bad_config([](tile_config & c) { c.start_row = 1; }));
    CHECK(bad_config([](tile_config & c) { c.reserved0[5] = 1; }));
    CHECK(bad_config([](tile_config & c) { c.rows[3] = 17; c.colsb[3] = 4; }));
    CHECK(bad_config([](tile_config & c) { c.rows[3] = 1; c.colsb[3] = 68; }));
    CHECK(bad_config([](tile_config & c) { c.rows[3] = 4; }));       // rows without colsb
    CHECK(bad_config([](tile_config & c) { c.colsb[3] = 4; }));      // colsb without rows
    CHECK(bad_config([](tile_config & c) { c.colsb[9] = 4; c.rows[9] = 1; }));   // reserved tiles 8-15

    emu::loadconfig(&good);
    alignas(64) int8_t mem[16 * 64] = {};
    CHECK(faults([&] { emu::zero(3); }));                     // tmm3 not configured
    CHECK(faults([&] { emu::loadd(8, mem, 64); }));           // no tmm8
    CHECK(faults([&] { emu::dpbssd(2, 0, 1); }));             // sources never written
    CHECK(faults([&] { emu::stored(2, mem, 64); }));          // never written
    emu::loadd(0, mem, 64);
    emu::loadd(1, mem, 64);
    emu::zero(2);
    CHECK(faults([&] { emu::dpbssd(2, 0, 0); }));             // operands not distinct
    CHECK(faults([&] { emu::dpbssd(2, 2, 1); }));
    CHECK(!faults([&] { emu::dpbssd(2, 0, 1); }));

    // Shapes: M (dst rows = src1 rows), K (src1 colsb / 4 = src2 rows), N (dst colsb = src2 colsb), and
    // colsb a multiple of 4 on every operand.
    const tile_config shapes = config_of({{0, 16, 4}, {1, 1, 64}, {2, 8, 64}, {3, 16, 8}, {4, 16, 32}, {5, 16, 6}, {6, 16, 64}});
    emu::loadconfig(&shapes);
    for (int t : {0, 1, 2, 3, 4, 5, 6}) emu::zero(t);
    CHECK(faults([&] { emu::dpbssd(2, 0, 1); }));             // M: 8 != 16
    CHECK(faults([&] { emu::dpbssd(6, 3, 1); }));             // K: 8 / 4 = 2 != 1
    CHECK(faults([&] { emu::dpbssd(4, 0, 1); }));             // N: 32 != 64
    CHECK(faults([&] { emu::dpbssd(6, 5, 1); }));             // colsb 6
    CHECK(faults([&] { emu::loadd(5, mem, 64); }));           // colsb 6
    CHECK(faults([&] { emu::stored(5, mem, 64); }));
    CHECK(!faults([&] { emu::dpbssd(6, 0, 1); }));

    // The state is the thread's: another thread sees no configuration.
    bool other_thread_faults = false;
    std::thread([&] { other_thread_faults = faults([] { emu::zero(6); }); }).join();
    CHECK(other_thread_faults);
    emu::release();
    CHECK(faults([] { emu::zero(6); }));                      // after TILERELEASE
}

TM_TEST("kernels: the AMX tile emulator's TDPBSSD is the signed int8 matrix product") {
    std::mt19937 rng(5);
    std::uniform_int_distribution<int> byte(-128, 127);
    // C (M x N) = C0 + A (M x 4K bytes = K quads) . B (K quads x N columns), every byte value: the full
    // 16 x 16 x 16-quad shape, and the AMX kernels' shapes (K = 8 quads = one 32-block; fewer rows or tokens).
    struct shape { int m, k, n; };
    for (const shape sh : {shape{16, 16, 16}, shape{16, 8, 16}, shape{5, 8, 3}, shape{16, 8, 1}, shape{1, 8, 1}}) {
        std::vector<int8_t> a(16 * 64), b(16 * 64);
        std::vector<int32_t> c0(16 * 16), c(16 * 16, 0);
        for (auto & v : a) v = int8_t(byte(rng));
        for (auto & v : b) v = int8_t(byte(rng));
        for (auto & v : c0) v = byte(rng) * 1000;
        a[0] = a[1] = a[2] = a[3] = -128;
        b[0] = b[1] = b[2] = b[3] = -128;
        const tile_config cfg = config_of({{0, sh.m, 4 * sh.k}, {1, sh.k, 4 * sh.n}, {2, sh.m, 4 * sh.n}});
        emu::loadconfig(&cfg);
        emu::loadd(0, a.data(), 64);
        emu::loadd(1, b.data(), 64);
        emu::loadd(2, c0.data(), 64);
        emu::dpbssd(2, 0, 1);
        emu::stored(2, c.data(), 64);
        emu::release();
        int bad = 0;
        for (int m = 0; m < 16; ++m)
            for (int n = 0; n < 16; ++n) {
                const size_t i = size_t(m * 16 + n);
                if (m >= sh.m || n >= sh.n) {   // outside the tile: TILESTORED leaves it alone
                    bad += c[i] != 0;
                    continue;
                }
                int64_t want = c0[i];
                for (int k = 0; k < sh.k; ++k)
                    for (int e = 0; e < 4; ++e) want += int64_t(a[size_t(m * 64 + 4 * k + e)]) * b[size_t(k * 64 + 4 * n + e)];
                bad += c[i] != int32_t(want);
            }
        if (bad) std::fprintf(stderr, "    shape M %d K %d N %d: %d wrong\n", sh.m, sh.k, sh.n, bad);
        CHECK_EQ(bad, 0);
    }
}

namespace {

// Raw weight rows of a block-step type: Q8_0 as raw_blocks, Q4_0, IQ4_NL, Q5_0, Q4_1 and Q5_1 as random nibbles
// and fifth bits (every pattern is a valid block) with random F16 scales (and minimums). The AMX tiles take all
// but Q5_0, which keeps the avx512 level's kernel on the avx512+amx level.
const ggml_type amx_types[] = {ggml_type::q8_0, ggml_type::q4_0, ggml_type::iq4_nl, ggml_type::q4_1, ggml_type::q5_1};
const ggml_type block_step_types[] = {ggml_type::q8_0, ggml_type::q4_0, ggml_type::iq4_nl, ggml_type::q5_0,
                                      ggml_type::q4_1, ggml_type::q5_1};

bool has_min(ggml_type type) { return type == ggml_type::q4_1 || type == ggml_type::q5_1; }

std::vector<uint8_t> raw_weights(ggml_type type, int64_t n_rows, int64_t nb, std::mt19937 & rng) {
    if (type == ggml_type::q8_0) {
        const std::vector<quant::block_q8_0> b = raw_blocks(size_t(n_rows * nb), true, rng);
        const auto * p = reinterpret_cast<const uint8_t *>(b.data());
        return std::vector<uint8_t>(p, p + b.size() * sizeof(quant::block_q8_0));
    }
    std::uniform_int_distribution<int> byte(0, 255);
    std::uniform_real_distribution<float> scale(0.01f, 0.1f), minimum(-0.8f, 0.2f);
    const size_t block = quant::type_block_bytes(type);   // d (F16) first, then m (F16) where there is one, then the nibbles
    const size_t head = has_min(type) ? 4 : 2;
    std::vector<uint8_t> w(block * size_t(n_rows * nb));
    for (size_t off = 0; off < w.size(); off += block) {
        const uint16_t d = quant::fp32_to_fp16(scale(rng)), m = quant::fp32_to_fp16(minimum(rng));
        std::memcpy(&w[off], &d, 2);
        if (has_min(type)) std::memcpy(&w[off + 2], &m, 2);
        for (size_t i = head; i < block; ++i) w[off + i] = uint8_t(byte(rng));
    }
    return w;
}

// n_blocks raw activation blocks for weights of type (raw_blocks; as Q8_1 for Q4_1 and Q5_1, with their sums
// s = d * sum(q) as the quantizer stores them), as bytes.
std::vector<uint8_t> raw_activations(ggml_type type, size_t n_blocks, std::mt19937 & rng) {
    const std::vector<quant::block_q8_0> b = raw_blocks(n_blocks, false, rng);
    if (!has_min(type)) {
        const auto * p = reinterpret_cast<const uint8_t *>(b.data());
        return std::vector<uint8_t>(p, p + b.size() * sizeof(quant::block_q8_0));
    }
    std::vector<uint8_t> out(n_blocks * sizeof(quant::block_q8_1));
    for (size_t i = 0; i < n_blocks; ++i) {
        quant::block_q8_1 x;
        x.d = b[i].d;
        int sum = 0;
        for (int j = 0; j < 32; ++j) sum += (x.qs[j] = b[i].qs[j]);
        x.s = quant::fp32_to_fp16(quant::fp16_to_fp32(b[i].d) * float(sum));
        std::memcpy(&out[i * sizeof x], &x, sizeof x);
    }
    return out;
}

} // namespace

namespace {

// The block-step numerics as a kernel table: the baseline's with the scalar reference block_step_ref in the
// entries the avx512 levels compute with them.
kernel_table block_step_reference_table() {
    kernel_table t = kernels_for(isa_level::baseline);
    t.matmul_q8_0 = block_step_ref::matmul_q8_0;
    t.matmul_q4_0 = block_step_ref::matmul_q4_0;
    t.matmul_iq4_nl = block_step_ref::matmul_iq4_nl;
    t.matmul_q5_0 = block_step_ref::matmul_q5_0;
    t.matmul_q4_1 = block_step_ref::matmul_q4_1;
    t.matmul_q5_1 = block_step_ref::matmul_q5_1;
    return t;
}

} // namespace

// The step of kernels/block-step/step.h is the fused one (a separate multiply and add would round twice), and
// the reference applies it per block in block order from 0.
TM_TEST("kernels: the block-step reference folds exact block dots with one fma per block") {
    CHECK_EQ(block_step(1.0f, 1.0f, 1.0f, 1), 2.0f);
    // (1 + 2^-12) * (1 + 2^-12) = 1 + 2^-11 + 2^-24: the product rounds (to 1 + 2^-11) before the fma, and
    // the fma keeps the rest: -1 + (1 + 2^-11) * 1 = 2^-11 exactly.
    const float e = 1.0f + std::ldexp(1.0f, -12);
    CHECK_EQ(block_step(-1.0f, e, e, 1), std::ldexp(1.0f, -11));
    // s * c not representable (s = 1 + 2^-23, c = 3): fused, -3 + 3 s = 3 * 2^-23 exactly; a rounded
    // product first would give 2^-21.
    const float s = 1.0f + std::ldexp(1.0f, -23);
    CHECK_EQ(block_step(-3.0f, s, 1.0f, 3), 3.0f * std::ldexp(1.0f, -23));
    // Two blocks of one row against one token, by hand.
    std::mt19937 rng(41);
    const std::vector<quant::block_q8_0> w = raw_blocks(2, true, rng), x = raw_blocks(2, false, rng);
    float want = 0.0f;
    for (int b = 0; b < 2; ++b) {
        int32_t c = 0;
        for (int j = 0; j < 32; ++j) c += int32_t(w[size_t(b)].qs[j]) * x[size_t(b)].qs[j];
        want = std::fma(quant::fp16_to_fp32(w[size_t(b)].d) * quant::fp16_to_fp32(x[size_t(b)].d), float(c), want);
    }
    float got = 0.0f;
    block_step_ref::matmul_q8_0(w.data(), 2 * sizeof(quant::block_q8_0), x.data(), 2 * sizeof(quant::block_q8_0), 1, 64, 0, 1, &got, 1);
    CHECK_EQ(std::memcmp(&got, &want, 4), 0);
}

// Every token count 1..64, 97, 270 and 300 (whole and partial 16-token groups, more than one AVX-512 pass
// of 16 groups; 1..3 tokens take the one-token kernel on avx512), odd row counts (whole 16-row AMX groups, up
// to 5 of them, and a partial group; several AVX-512 weight panels, growing from the range's first, and two
// passes over them, the range starting inside one), row ranges not starting at 0, a single row, K of 1..65
// blocks (every remainder of the one-token kernel's 8-block groups), for Q8_0, Q4_0, IQ4_NL, Q5_0, Q4_1 and Q5_1 weights
// at the int8 extremes: each block-step level's outputs are the scalar reference's bits (so every token's
// result is the one it gets alone — batch invariance by construction, checked — and avx512 and avx512+amx
// give the same bits), and near the baseline level's reference (the kernel-level bound docs/kernels.md
// states: 2e-5 of the sum of |products|).
TM_TEST("kernels: the block-step matmuls give their scalar reference's bits for every token count and row range") {
    const std::vector<const tm_test::kernel_level *> levels = block_step_levels();
    // the emulated levels run wherever AVX2 does
    CHECK(levels.size() >= 2 || level_named("avx2") == nullptr);
    if (!level_named("avx512+amx")) std::printf("  (no real AMX here: the avx512+amx-emulated level stands for it)\n");
    const kernel_table baseline = kernels_for(isa_level::baseline);
    const kernel_table own = block_step_reference_table();
    struct shape { int64_t n_out, nb, r0, tok_lo, tok_hi; };
    std::vector<shape> shapes = {{37, 9, 0, 1, 64}, {50, 3, 3, 1, 33}, {16, 1, 0, 1, 17}, {1, 4, 0, 1, 20},
                                 {83, 2, 0, 1, 18}, {100, 2, 17, 15, 17}, {35, 65, 0, 40, 40}, {20, 3, 0, 97, 97},
                                 {130, 65, 5, 1, 4}, {700, 65, 3, 5, 5}, {9, 2, 1, 300, 300}, {90, 40, 2, 270, 270}};
    for (int64_t nb = 1; nb <= 17; ++nb) shapes.push_back({9, nb, 1, 1, 2});
    std::mt19937 rng(17);
    // max |level - reference| / sum |products|
    double worst = 0.0;
    for (ggml_type type : block_step_types)
        for (const shape & s : shapes) {
            const int64_t n_in = s.nb * 32, max_tok = s.tok_hi;
            const ggml_type act = quant::activation_type(type);
            const size_t wrow = quant::row_bytes(type, n_in), xrow = quant::row_bytes(act, n_in);
            const std::vector<uint8_t> wv = raw_weights(type, s.n_out, s.nb, rng);
            const std::vector<uint8_t> xv = raw_activations(type, size_t(max_tok * s.nb), rng);
            guarded_bytes w(wv.size());
            std::memcpy(w.data(), wv.data(), wv.size());
            // The scalar reference of these numerics, one token at a time: the bits every call must give.
            std::vector<float> y_own(size_t(max_tok * s.n_out)), y_base(y_own.size());
            for (int64_t t = 0; t < max_tok; ++t)
                matmul_rows_for(own, type)(wv.data(), wrow, xv.data() + size_t(t) * xrow, xrow, 1, n_in, s.r0, s.n_out,
                                           y_own.data() + t * s.n_out, s.n_out);
            matmul_rows_for(baseline, type)(wv.data(), wrow, xv.data(), xrow, max_tok, n_in, 0, s.n_out, y_base.data(), s.n_out);
            std::vector<float> wf(size_t(s.n_out * n_in)), xf(size_t(max_tok * n_in));
            quant::dequantize_row(type, wv.data(), wf.data(), s.n_out * n_in);
            quant::dequantize_row(act, xv.data(), xf.data(), max_tok * n_in);
            auto magnitude = [&](int64_t t, int64_t r) {
                double sum = 0.0;
                for (int64_t i = 0; i < n_in; ++i) sum += std::fabs(double(wf[size_t(r * n_in + i)]) * xf[size_t(t * n_in + i)]);
                return sum;
            };
            for (const tm_test::kernel_level * l : levels) {
                int diffs = 0, far = 0;
                for (int64_t n_tok = s.tok_lo; n_tok <= s.tok_hi; ++n_tok) {
                    guarded_bytes x(xrow * size_t(n_tok));
                    std::memcpy(x.data(), xv.data(), xrow * size_t(n_tok));
                    std::vector<float> y(size_t(n_tok * s.n_out), -1.0f);
                    matmul_rows_for(l->table, type)(w.data(), wrow, x.data(), xrow, n_tok, n_in, s.r0, s.n_out, y.data(), s.n_out);
                    for (int64_t t = 0; t < n_tok; ++t) {
                        for (int64_t r = 0; r < s.r0; ++r) diffs += y[size_t(t * s.n_out + r)] != -1.0f;   // outside the range: untouched
                        for (int64_t r = s.r0; r < s.n_out; ++r) {
                            const size_t i = size_t(t * s.n_out + r);
                            diffs += std::memcmp(&y[i], &y_own[i], 4) != 0;
                            const double mag = magnitude(t, r), dev = std::fabs(double(y[i]) - y_base[i]);
                            far += !(dev <= 2e-5 * mag + 1e-6);
                            if (mag > 0) worst = std::fmax(worst, dev / mag);
                        }
                    }
                }
                if (diffs || far)
                    std::fprintf(stderr, "    %s, type %u, %lld rows from %lld, %lld blocks: %d outputs differ from the block-step reference's bits, %d far from the baseline reference\n",
                                 l->name, unsigned(type), (long long)s.n_out, (long long)s.r0, (long long)s.nb, diffs, far);
                CHECK_EQ(diffs, 0);
                CHECK_EQ(far, 0);
            }
        }
    if (!levels.empty()) std::printf("  (largest |block-step level - baseline reference| / sum |products|: %.2e)\n", worst);
    for (const tm_test::kernel_level * l : amx_levels())
        if (l->emulated) CHECK_EQ(int(amx_emulated::tile_config_in_force().palette_id), 0);   // every call released its tiles
}

namespace {

// The thread's tile configuration, read and loaded on the CPU (STTILECFG, LDTILECFG; palette 0 releases).
tile_config real_tile_config() {
    tile_config c;
    __asm__ volatile("sttilecfg %0" : "=m"(c)::"memory");
    return c;
}
void real_load_tile_config(const tile_config & c) { __asm__ volatile("ldtilecfg %0" ::"m"(c) : "memory"); }

} // namespace

// Another library's AMX code may share the thread (a libuv worker runs Model.evaluate and, on its next task,
// node-llama-cpp's decode): ggml's AMX kernels configure a thread's tiles once, then assume the configuration
// stays. So a call leaves the configuration as it found it — none (released), or the other code's, loaded
// again — and computes the same bits whichever it found.
TM_TEST("kernels: an AMX call leaves the thread's tile configuration as it found it") {
    const tile_config foreign = config_of({{0, 16, 64}, {1, 16, 64}, {2, 16, 64}, {3, 16, 64}, {4, 16, 64}, {5, 16, 64}, {6, 16, 64}, {7, 16, 64}});
    std::mt19937 rng(29);
    const int64_t nb = 4, n_in = nb * 32, n_out = 40;
    const size_t row = size_t(nb) * sizeof(quant::block_q8_0);
    const std::vector<quant::block_q8_0> w = raw_blocks(size_t(n_out * nb), true, rng);
    const std::vector<quant::block_q8_0> x = raw_blocks(size_t(33 * nb), false, rng);
    std::vector<uint8_t> packed(row * 32);
    for (int64_t g = 0; g < 32; g += 16)
        quant::q8_0_x16_pack(reinterpret_cast<const uint8_t *>(w.data()) + size_t(g) * row, row, nb,
                             reinterpret_cast<quant::block_q8_0_x16 *>(packed.data() + size_t(g) * row));
    const std::vector<const tm_test::kernel_level *> levels = amx_levels();
    CHECK(!levels.empty() || level_named("avx2") == nullptr);
    for (const tm_test::kernel_level * l : levels) {
        auto in_force = l->emulated ? amx_emulated::tile_config_in_force : real_tile_config;
        auto load = l->emulated ? amx_emulated::load_tile_config : real_load_tile_config;
        for (int64_t n_tok : {int64_t(1), k_amx_min_tokens, int64_t(33)}) {
            // Decode takes the tiles only on the repacked layout (its first 32 rows).
            const bool x16 = n_tok < k_amx_min_tokens;
            const int64_t rows = x16 ? 32 : n_out;
            auto call = [&](float * y) {
                if (x16) l->table.matmul_q8_0_x16(packed.data(), row, x.data(), row, n_tok, n_in, 0, rows, y, n_out);
                else l->table.matmul_q8_0(w.data(), row, x.data(), row, n_tok, n_in, 0, rows, y, n_out);
            };
            std::vector<float> alone(size_t(n_tok * n_out)), beside(alone.size());
            CHECK_EQ(int(in_force().palette_id), 0);
            call(alone.data());
            CHECK_EQ(int(in_force().palette_id), 0);
            load(foreign);
            call(beside.data());
            const tile_config after = in_force();
            CHECK_EQ(std::memcmp(&after, &foreign, sizeof foreign), 0);
            CHECK_EQ(std::memcmp(alone.data(), beside.data(), alone.size() * sizeof(float)), 0);
            load(tile_config{});   // palette 0: none in force again
        }
    }
}

// The dispatch rule: a batch of k_amx_min_tokens tokens or more takes the tiles, one TDPBSSD per block for each
// group of up to 16 rows and 16 tokens (a last group of fewer tokens included); fewer tokens (decode) take
// the AVX-512 kernel of the same numerics, no tile at all (on the nibble formats' 16-row layouts, its lanes) — except
// on Q8_0 repacked at load, which takes the tiles for every token count; and the AMX level is the machine's level exactly
// where the CPU and the OS grant AMX, its other entries the AVX-512 level's.
TM_TEST("kernels: AMX takes batches of 16 tokens and more (repacked Q8_0: every batch), and is chosen only where granted") {
    CHECK_EQ(k_amx_min_tokens, int64_t(16));
    const tm_test::kernel_level * emulated = level_named("avx512+amx-emulated");
    CHECK(emulated != nullptr || level_named("avx2") == nullptr);
    if (emulated) {
        std::mt19937 rng(3);
        const int64_t nb = 2, n_in = 64;
        const size_t row = size_t(nb) * sizeof(quant::block_q8_0);
        const std::vector<quant::block_q8_0> w = raw_blocks(size_t(70 * nb), true, rng);
        const std::vector<quant::block_q8_0> x = raw_blocks(size_t(33 * nb), false, rng);
        std::vector<float> y(33 * 70);
        auto products = [&](int64_t n_tok, int64_t r0, int64_t r1) {
            const uint64_t before = amx_emulated::tile_products();
            emulated->table.matmul_q8_0(w.data(), row, x.data(), row, n_tok, n_in, r0, r1, y.data(), 70);
            return amx_emulated::tile_products() - before;
        };
        CHECK_EQ(products(1, 0, 20), uint64_t(0));            // decode: the AVX-512 kernel
        CHECK_EQ(products(15, 0, 16), uint64_t(0));
        CHECK_EQ(products(16, 0, 1), uint64_t(nb));           // one row: a 1-row tile
        CHECK_EQ(products(16, 0, 20), uint64_t(2 * nb));      // 16 rows, then 4
        CHECK_EQ(products(33, 0, 20), uint64_t(3 * 2 * nb));  // 16 + 16 + 1 tokens x 16 + 4 rows
        CHECK_EQ(products(16, 3, 70), uint64_t(5 * nb));      // 67 rows: four 16-row groups and 3
        CHECK_EQ(products(16, 5, 5), uint64_t(0));            // no rows
        // Q8_0 repacked at load: every token count on the tiles, decode included.
        std::vector<uint8_t> packed(row * 64);
        for (int64_t g = 0; g < 64; g += 16)
            quant::q8_0_x16_pack(reinterpret_cast<const uint8_t *>(w.data()) + size_t(g) * row, row, nb,
                                 reinterpret_cast<quant::block_q8_0_x16 *>(packed.data() + size_t(g) * row));
        auto x16_products = [&](int64_t n_tok, int64_t r0, int64_t r1) {
            const uint64_t before = amx_emulated::tile_products();
            emulated->table.matmul_q8_0_x16(packed.data(), row, x.data(), row, n_tok, n_in, r0, r1, y.data(), 70);
            return amx_emulated::tile_products() - before;
        };
        CHECK_EQ(x16_products(1, 0, 64), uint64_t(4 * nb));
        CHECK_EQ(x16_products(15, 16, 48), uint64_t(2 * nb));
        CHECK_EQ(x16_products(33, 0, 16), uint64_t(3 * nb));
        CHECK(emulated->table.q8_0_x16);
        // Q4_1, Q4_0 and IQ4_NL repacked at load (the avx512 level's layouts): fewer tokens on its lanes, more on tiles.
        // (The products are counted; raw weights stand in for repacked ones, whose bytes are the same kind.)
        for (const auto & [type, entry] : {std::pair{ggml_type::q4_1, &kernel_table::matmul_q4_1_x16},
                                           std::pair{ggml_type::q4_0, &kernel_table::matmul_q4_0_x16},
                                           std::pair{ggml_type::iq4_nl, &kernel_table::matmul_iq4_nl_x16}}) {
            const std::vector<uint8_t> wn = raw_weights(type, 32, nb, rng), xn = raw_activations(type, size_t(33 * nb), rng);
            const size_t w_row = wn.size() / 32, x_row = xn.size() / 33;
            auto nibble_products = [&](int64_t n_tok) {
                const uint64_t before = amx_emulated::tile_products();
                (emulated->table.*entry)(wn.data(), w_row, xn.data(), x_row, n_tok, n_in, 0, 32, y.data(), 32);
                return amx_emulated::tile_products() - before;
            };
            CHECK_EQ(nibble_products(1), uint64_t(0));
            CHECK_EQ(nibble_products(15), uint64_t(0));
            CHECK_EQ(nibble_products(16), uint64_t(2 * nb));
            CHECK_EQ(nibble_products(33), uint64_t(3 * 2 * nb));
        }
        CHECK(emulated->table.q4_1_x16 && emulated->table.q4_0_x16 && emulated->table.q5_0_x16 && !emulated->table.q6_k_x16);
    }
    const cpu_features & f = cpu_features_get();
    CHECK_EQ(std::string(kernels_get().isa) == "avx512+amx", f.amx);
    CHECK_EQ(std::string(cpu_isa_name()) == "avx512+amx", f.amx);
    CHECK(!f.amx || f.avx512);
    if (f.amx) {
        const kernel_table t = kernels_for(isa_level::avx512_amx), simd = kernels_for(isa_level::avx512);
        CHECK(t.matmul_q8_0 == &amx::matmul_q8_0);
        CHECK(t.matmul_q4_0 == &amx::matmul_q4_0);
        CHECK(t.matmul_iq4_nl == &amx::matmul_iq4_nl);
        CHECK(t.matmul_q8_0_x16 == &amx::matmul_q8_0_x16);
        CHECK(t.q8_0_x16 && simd.q8_0_x16);
        CHECK(t.matmul_q4_1 == &amx::matmul_q4_1);
        CHECK(t.matmul_q5_1 == &amx::matmul_q5_1);
        CHECK(t.matmul_q6_k == &amx::matmul_q6_k);
        CHECK(!t.q6_k_x16 && simd.q6_k_x16);
        CHECK(t.q4_1_x16 && t.matmul_q4_1_x16 == &amx::matmul_q4_1_x16);
        CHECK(t.q4_0_x16 && t.matmul_q4_0_x16 == &amx::matmul_q4_0_x16 && t.matmul_iq4_nl_x16 == &amx::matmul_iq4_nl_x16);
        CHECK(t.q5_0_x16 && t.matmul_q5_0_x16 == simd.matmul_q5_0_x16);
        CHECK(t.matmul_q5_0 == simd.matmul_q5_0);
        CHECK(t.matmul_q4_k == simd.matmul_q4_k);
        CHECK(t.matmul_f16 == simd.matmul_f16);
    }
    // The OS's answer, asked here even where cpu_features did not ask: granted wherever AMX is in use, and
    // refused by a CPU whose cpuid has no AMX-TILE.
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    const bool amx_tile = __get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) && (edx & (1u << 24));
    const bool granted = os_grants_amx_tile_data();
    std::printf("  (cpuid AMX-TILE: %s; the OS %s the tile data)\n", amx_tile ? "yes" : "no", granted ? "grants" : "refuses");
    if (f.amx) CHECK(granted);
    if (!amx_tile) CHECK(!granted);
    const char * cap = std::getenv("TOKENMILL_ISA");
    if (cap && (std::strcmp(cap, "avx512") == 0 || std::strcmp(cap, "avx2") == 0 || std::strcmp(cap, "baseline") == 0))
        CHECK(!f.amx);
}

// matmul() on 1-3 threads: its row tasks (multiples of 4 rows, not of 16) cut the AMX tiles and the AVX-512
// panels at other places, and each thread configures its own tiles and packs its own activations; the outputs
// are still the scalar reference's bits, for a batch and for decode.
TM_TEST("kernels: block-step matmul on a thread pool gives its scalar reference's bits") {
    const std::vector<const tm_test::kernel_level *> levels = block_step_levels();
    const kernel_table own = block_step_reference_table();
    std::mt19937 rng(23);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    const int64_t n_in = 32 * 12, n_out = 150;
    thread_pool pool1(1), pool2(2), pool3(3);
    for (int64_t n_tok : {int64_t(45), int64_t(2), int64_t(1)}) {
        std::vector<float> x(size_t(n_in * n_tok));
        for (auto & v : x) v = normal(rng);
        for (ggml_type type : block_step_types) {
            const std::vector<uint8_t> w = raw_weights(type, n_out, n_in / 32, rng);
            std::vector<uint8_t> scratch(matmul_scratch_bytes(type, n_in, n_tok));
            std::vector<float> want(size_t(n_tok * n_out)), got(want.size());
            matmul(pool1, own, type, w.data(), n_out, n_in, x.data(), n_tok, want.data(), scratch.data(), scratch.size());
            for (const tm_test::kernel_level * l : levels)
                for (thread_pool * p : {&pool1, &pool2, &pool3}) {
                    matmul(*p, l->table, type, w.data(), n_out, n_in, x.data(), n_tok, got.data(), scratch.data(), scratch.size());
                    const int diffs = std::memcmp(got.data(), want.data(), got.size() * 4) != 0;
                    if (diffs) std::fprintf(stderr, "    %s, type %u, %lld tokens on %d threads differs from the block-step reference\n", l->name, unsigned(type), (long long)n_tok, p->n_threads());
                    CHECK_EQ(diffs, 0);
                }
        }
    }
}

// Whether two levels' matmul rows of type give the same bits: n_out random rows of nb blocks against n_tok
// random activation rows (Q8_0, or Q8_1 for Q4_1 and Q5_1).
bool same_bits(const kernel_table & first, const kernel_table & second, ggml_type type, int64_t n_out, int64_t nb,
               int64_t n_tok, std::mt19937 & rng) {
    const int64_t n_in = nb * 32;
    const size_t wrow = quant::row_bytes(type, n_in), xrow = quant::row_bytes(quant::activation_type(type), n_in);
    const std::vector<uint8_t> w = raw_weights(type, n_out, nb, rng);
    const std::vector<uint8_t> x = raw_activations(type, size_t(n_tok * nb), rng);
    std::vector<float> a(size_t(n_tok * n_out)), b(a.size());
    matmul_rows_for(first, type)(w.data(), wrow, x.data(), xrow, n_tok, n_in, 0, n_out, a.data(), n_out);
    matmul_rows_for(second, type)(w.data(), wrow, x.data(), xrow, n_tok, n_in, 0, n_out, b.data(), n_out);
    return std::memcmp(a.data(), b.data(), a.size() * 4) == 0;
}

// The avx512 and avx512+amx levels compute the same bits for the block-step types (the property the shared
// reference implies, checked directly): the emulated AMX level against every avx512 level, a batch and decode.
TM_TEST("kernels: the AMX level equals the avx512 level bit for bit") {
    const tm_test::kernel_level * amx = level_named("avx512+amx-emulated");
    CHECK(amx != nullptr || level_named("avx2") == nullptr);
    if (!amx) {
        std::printf("  (no avx512+amx-emulated level: this run has no AVX2 level to emulate it on)\n");
        return;
    }
    std::mt19937 rng(31);
    const int64_t nb = 19, n_out = 45;
    int compared = 0;
    for (const char * name : {"avx512", "avx512-emulated"}) {
        const tm_test::kernel_level * simd = level_named(name);
        if (!simd) continue;
        for (ggml_type type : block_step_types)
            for (int64_t n_tok : {int64_t(1), int64_t(3), int64_t(21)}) {
                CHECK(same_bits(simd->table, amx->table, type, n_out, nb, n_tok, rng));
                ++compared;
            }
    }
    CHECK(compared > 0);
}

// On a machine with AMX the real tiles run too and must give the emulator's bits.
TM_TEST("kernels: the real AMX level equals the emulated one bit for bit") {
    const tm_test::kernel_level * real = level_named("avx512+amx");
    const tm_test::kernel_level * emulated = level_named("avx512+amx-emulated");
    CHECK(emulated != nullptr || level_named("avx2") == nullptr);
    if (!real || !emulated) {
        std::printf("  (no %s level on this machine: nothing to compare)\n", emulated ? "real avx512+amx" : "avx512+amx-emulated");
        return;
    }
    std::mt19937 rng(29);
    const int64_t nb = 33, n_out = 71, n_tok = 53;
    for (ggml_type type : amx_types) CHECK(same_bits(real->table, emulated->table, type, n_out, nb, n_tok, rng));
}

// Q8_0 repacked 16 rows at a time at load for the AMX tiles and the avx512 level (quant/q8-0-x16.h): the repacking
// gives the file's blocks back bit for bit, and every table's matmul_q8_0_x16 — the tiles on the AMX levels (real
// where the CPU has them, emulated on every machine with AVX2), the lanes (one token a block pair at a time, up to 16
// tokens with the next group prefetched) and the prompt tile on decoded panels on the avx512 levels (real and
// emulated), the scalar reference elsewhere — gives the block-step reference's bits on the GGUF rows for every token
// count (decode included: the tiles take every count on this layout, one TDPBSSD per block, 16 rows and up to 16
// tokens), every range of whole groups, one and many block pairs, weights at the int8 extremes and ending at an
// inaccessible page; only the AMX and avx512 levels ask for the layout; through matmul_prepared_many on 1-3 threads
// the repacked weight equals the GGUF one; a repacked weight of partial groups or block pairs is refused.
TM_TEST("kernels: Q8_0 rows repacked 16 at a time give the GGUF rows' block-step bits") {
    std::mt19937 rng(808);
    const int64_t max_tok = 97;
    struct shape { int64_t n_out, nb, r0, r1; };
    int64_t compared = 0;
    for (const shape & s : {shape{16, 2, 0, 16}, shape{48, 4, 16, 48}, shape{80, 66, 0, 80}, shape{64, 6, 32, 48}}) {
        const int64_t n_in = s.nb * quant::qk8_0;
        const size_t row = size_t(s.nb) * sizeof(quant::block_q8_0);
        const std::vector<quant::block_q8_0> w = raw_blocks(size_t(s.n_out * s.nb), true, rng);
        const std::vector<quant::block_q8_0> x = raw_blocks(size_t(max_tok * s.nb), false, rng);
        guarded_bytes packed(row * size_t(s.n_out));
        for (int64_t g = 0; g < s.n_out; g += quant::k_x16_rows)
            quant::q8_0_x16_pack(reinterpret_cast<const uint8_t *>(w.data()) + size_t(g) * row, row, s.nb,
                                 reinterpret_cast<quant::block_q8_0_x16 *>(packed.data() + size_t(g) * row));
        int back = 0;
        for (int64_t r = 0; r < s.n_out; ++r)
            for (int64_t b = 0; b < s.nb; ++b) {
                const auto * g = reinterpret_cast<const quant::block_q8_0_x16 *>(packed.data() + size_t(r / 16 * 16) * row);
                const quant::block_q8_0 blk = quant::q8_0_x16_row_block(g, b, int(r % 16));
                back += std::memcmp(&blk, &w[size_t(r * s.nb + b)], sizeof blk) != 0;
            }
        CHECK_EQ(back, 0);
        std::vector<float> want(size_t(max_tok * s.n_out));
        for (int64_t t = 0; t < max_tok; ++t)
            block_step_ref::matmul_q8_0(w.data(), row, x.data() + t * s.nb, row, 1, n_in, 0, s.n_out, want.data() + t * s.n_out, s.n_out);
        std::vector<std::pair<const char *, matmul_rows_kernel *>> kernels = {{"reference", block_step_ref::matmul_q8_0_x16}};
        for (const tm_test::kernel_level & l : tm_test::kernel_levels()) kernels.push_back({l.name, l.table.matmul_q8_0_x16});
        for (const auto & [name, kernel] : kernels) {
            int bad = 0;
            for (int64_t n_tok = 1; n_tok <= max_tok; n_tok += n_tok < 40 ? 1 : 57) {
                guarded_bytes xg(row * size_t(n_tok));
                std::memcpy(xg.data(), x.data(), row * size_t(n_tok));
                std::vector<float> y(size_t(n_tok * s.n_out), NAN);
                kernel(packed.data(), row, xg.data(), row, n_tok, n_in, s.r0, s.r1, y.data(), s.n_out);
                for (int64_t t = 0; t < n_tok; ++t)
                    for (int64_t r = 0; r < s.n_out; ++r) {
                        const float got = y[size_t(t * s.n_out + r)];
                        bad += r >= s.r0 && r < s.r1 ? std::memcmp(&got, &want[size_t(t * s.n_out + r)], 4) != 0 : !std::isnan(got);
                    }
            }
            if (bad) std::fprintf(stderr, "    %s, %lld rows [%lld, %lld), %lld blocks: %d outputs differ from the reference\n", name,
                                  (long long)s.n_out, (long long)s.r0, (long long)s.r1, (long long)s.nb, bad);
            CHECK_EQ(bad, 0);
            ++compared;
        }
    }
    CHECK(compared >= 4);
    if (!level_named("avx512") && !level_named("avx512-emulated") && !level_named("avx512+amx") && !level_named("avx512+amx-emulated"))
        std::printf("  (no AVX-512 level here, real or emulated: only the scalar reference of the layout ran)\n");

    const int64_t nb = 12, n_in = nb * 32, n_out = 96;
    const size_t row = size_t(nb) * sizeof(quant::block_q8_0);
    const std::vector<quant::block_q8_0> w = raw_blocks(size_t(n_out * nb), true, rng);
    std::vector<uint8_t> packed(row * size_t(n_out));
    for (int64_t g = 0; g < n_out; g += quant::k_x16_rows)
        quant::q8_0_x16_pack(reinterpret_cast<const uint8_t *>(w.data()) + size_t(g) * row, row, nb,
                             reinterpret_cast<quant::block_q8_0_x16 *>(packed.data() + size_t(g) * row));
    thread_pool pool1(1), pool2(2), pool3(3);
    for (const tm_test::kernel_level & level : tm_test::kernel_levels()) {
        const std::string name = level.name;
        CHECK_EQ(level.table.q8_0_x16, name.rfind("avx512", 0) == 0);   // the AVX-512 levels, AMX or not
        if (!level.table.q8_0_x16) continue;
        const tm_test::kernel_level * l = &level;
        for (thread_pool * pool : {&pool1, &pool2, &pool3})
            for (int64_t n_tok : {1, 3, 16, 45}) {
                const std::vector<quant::block_q8_0> x = raw_blocks(size_t(n_tok * nb), false, rng);
                std::vector<float> y_gguf(size_t(n_out * n_tok)), y_x16(y_gguf.size());
                const matmul_part gguf{ggml_type::q8_0, w.data(), n_out, y_gguf.data()};
                const matmul_part x16{ggml_type::q8_0, packed.data(), n_out, y_x16.data(), weight_layout::q8_0_x16};
                matmul_prepared_many(*pool, l->table, &gguf, 1, n_in, x.data(), n_tok);
                matmul_prepared_many(*pool, l->table, &x16, 1, n_in, x.data(), n_tok);
                CHECK(std::memcmp(y_gguf.data(), y_x16.data(), y_gguf.size() * sizeof(float)) == 0);
            }
    }
    std::vector<float> y(static_cast<size_t>(n_out));
    const quant::block_q8_0 x0[nb] = {};
    const matmul_part partial_rows{ggml_type::q8_0, packed.data(), n_out - 8, y.data(), weight_layout::q8_0_x16};
    CHECK_THROWS_CODE(matmul_prepared_many(pool2, kernels_get(), &partial_rows, 1, n_in, x0, 1), invalid_argument);
    const matmul_part odd_blocks{ggml_type::q8_0, packed.data(), 16, y.data(), weight_layout::q8_0_x16};
    CHECK_THROWS_CODE(matmul_prepared_many(pool2, kernels_get(), &odd_blocks, 1, 3 * 32, x0, 1), invalid_argument);
}
