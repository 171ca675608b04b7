// The AMX path (docs/kernels.md, "The AMX path"): the scalar tile emulator faults wherever the hardware
// would, and the AMX Q8_0 kernel — under that emulator on every machine with AVX2, on the tiles themselves
// where the CPU has AMX — gives bit for bit what the other SIMD levels give (batch invariance across paths:
// a row's result never depends on whether its batch took the AMX tiles) and stays near the scalar reference.
// The weights and activations end at an inaccessible page, so a tile load past a row's end faults here.
#include "check.h"
#include "kernel-levels.h"

#include "base/cpu-features.h"
#include "base/thread-pool.h"
#include "kernels/amx/amx.h"
#include "kernels/amx/tile-emulator.h"
#include "kernels/matmul.h"
#include "quant/fp16.h"
#include "quant/q8-0.h"
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
    // C (16 x 16) = C0 + A (16 x 64 bytes = 16 quads) . B (16 quads x 16 columns), every byte value.
    std::vector<int8_t> a(16 * 64), b(16 * 64);
    std::vector<int32_t> c0(16 * 16), c(16 * 16);
    for (auto & v : a) v = int8_t(byte(rng));
    for (auto & v : b) v = int8_t(byte(rng));
    for (auto & v : c0) v = byte(rng) * 1000;
    a[0] = a[1] = a[2] = a[3] = -128;
    b[0] = b[1] = b[2] = b[3] = -128;
    const tile_config cfg = config_of({{0, 16, 64}, {1, 16, 64}, {2, 16, 64}});
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
            int64_t want = c0[size_t(m * 16 + n)];
            for (int k = 0; k < 16; ++k)
                for (int e = 0; e < 4; ++e) want += int64_t(a[size_t(m * 64 + 4 * k + e)]) * b[size_t(k * 64 + 4 * n + e)];
            bad += c[size_t(m * 16 + n)] != int32_t(want);
        }
    CHECK_EQ(bad, 0);
}

namespace {

// Raw weight rows of a 32-block type the AMX level takes: Q8_0 as raw_blocks, Q4_0 and IQ4_NL as random
// nibbles (every pattern is a valid block) with random F16 scales.
const ggml_type amx_types[] = {ggml_type::q8_0, ggml_type::q4_0, ggml_type::iq4_nl};

std::vector<uint8_t> raw_weights(ggml_type type, int64_t n_rows, int64_t nb, std::mt19937 & rng) {
    if (type == ggml_type::q8_0) {
        const std::vector<quant::block_q8_0> b = raw_blocks(size_t(n_rows * nb), true, rng);
        const auto * p = reinterpret_cast<const uint8_t *>(b.data());
        return std::vector<uint8_t>(p, p + b.size() * sizeof(quant::block_q8_0));
    }
    std::uniform_int_distribution<int> byte(0, 255);
    std::uniform_real_distribution<float> scale(0.01f, 0.1f);
    const size_t block = quant::type_block_bytes(type);   // d (F16) first, then the nibbles
    std::vector<uint8_t> w(block * size_t(n_rows * nb));
    for (size_t off = 0; off < w.size(); off += block) {
        const uint16_t d = quant::fp32_to_fp16(scale(rng));
        std::memcpy(&w[off], &d, 2);
        for (size_t i = 2; i < block; ++i) w[off + i] = uint8_t(byte(rng));
    }
    return w;
}

} // namespace

// Every token count 1..64 (whole and partial 16-token groups), 37 rows (two 16-row tiles and 5 left over),
// 9 blocks, and a few other shapes (a row range not starting at 0, a single tile, a long K), for Q8_0, Q4_0
// and IQ4_NL weights: each AMX level's outputs are the bits of every other SIMD level, token for token; and
// they stay near the reference.
TM_TEST("kernels: the AMX matmuls give the AVX-512 kernels' bits (batch invariance across paths)") {
    const std::vector<const tm_test::kernel_level *> amx = amx_levels();
    CHECK(!amx.empty() || level_named("avx2") == nullptr);   // the emulated AMX level runs wherever AVX2 does
    if (!level_named("avx512+amx")) std::printf("  (no real AMX here: the avx512+amx-emulated level stands for it)\n");
    const tm_test::kernel_level * simd = level_named("avx512") ? level_named("avx512") : level_named("avx512-emulated");
    CHECK(simd != nullptr || amx.empty());
    if (!simd) return;
    const kernel_table ref = kernels_for(isa_level::baseline);
    struct shape { int64_t n_out, nb, r0, tok_lo, tok_hi; };
    const shape shapes[] = {{37, 9, 0, 1, 64}, {50, 3, 3, 16, 33}, {16, 1, 0, 16, 16}, {35, 65, 0, 40, 40}};
    std::mt19937 rng(17);
    for (ggml_type type : amx_types)
        for (const shape & s : shapes) {
            const int64_t n_in = s.nb * 32, max_tok = s.tok_hi;
            const size_t wrow = quant::row_bytes(type, n_in), xrow = size_t(s.nb) * sizeof(quant::block_q8_0);
            const std::vector<uint8_t> wv = raw_weights(type, s.n_out, s.nb, rng);
            const std::vector<quant::block_q8_0> xv = raw_blocks(size_t(max_tok * s.nb), false, rng);
            guarded_bytes w(wv.size());
            std::memcpy(w.data(), wv.data(), wv.size());
            // The reference, and its bound: 2e-5 of the sum of |products| of the dequantized operands.
            std::vector<float> y_ref(size_t(max_tok * s.n_out));
            matmul_rows_for(ref, type)(wv.data(), wrow, xv.data(), xrow, max_tok, n_in, 0, s.n_out, y_ref.data(), s.n_out);
            std::vector<float> wf(size_t(s.n_out * n_in)), xf(size_t(max_tok * n_in));
            quant::dequantize_row(type, wv.data(), wf.data(), s.n_out * n_in);
            quant::dequantize_row(ggml_type::q8_0, xv.data(), xf.data(), max_tok * n_in);
            auto bound = [&](int64_t t, int64_t r) {
                double sum = 0.0;
                for (int64_t i = 0; i < n_in; ++i) sum += std::fabs(double(wf[size_t(r * n_in + i)]) * xf[size_t(t * n_in + i)]);
                return 2e-5 * sum + 1e-6;
            };
            // The SIMD level one token at a time: the bits every call of every level must give.
            std::vector<float> y_one(size_t(max_tok * s.n_out));
            for (int64_t t = 0; t < max_tok; ++t)
                matmul_rows_for(simd->table, type)(wv.data(), wrow, xv.data() + t * s.nb, xrow, 1, n_in, s.r0, s.n_out,
                                                   y_one.data() + t * s.n_out, s.n_out);
            for (const tm_test::kernel_level & l : tm_test::kernel_levels()) {
                if (std::strcmp(l.name, "baseline") == 0) continue;
                int diffs = 0, far = 0;
                for (int64_t n_tok = s.tok_lo; n_tok <= s.tok_hi; ++n_tok) {
                    guarded_bytes x(xrow * size_t(n_tok));
                    std::memcpy(x.data(), xv.data(), xrow * size_t(n_tok));
                    std::vector<float> y(size_t(n_tok * s.n_out), -1.0f);
                    matmul_rows_for(l.table, type)(w.data(), wrow, x.data(), xrow, n_tok, n_in, s.r0, s.n_out, y.data(), s.n_out);
                    for (int64_t t = 0; t < n_tok; ++t)
                        for (int64_t r = s.r0; r < s.n_out; ++r) {
                            const size_t i = size_t(t * s.n_out + r);
                            diffs += std::memcmp(&y[i], &y_one[i], 4) != 0;
                            far += !(std::fabs(double(y[i]) - y_ref[i]) <= bound(t, r));
                        }
                }
                if (diffs || far)
                    std::fprintf(stderr, "    %s, type %u, %lld rows from %lld, %lld blocks: %d outputs differ from %s's one-token bits, %d far from the reference\n",
                                 l.name, unsigned(type), (long long)s.n_out, (long long)s.r0, (long long)s.nb, diffs, simd->name, far);
                CHECK_EQ(diffs, 0);
                CHECK_EQ(far, 0);
            }
        }
    for (const tm_test::kernel_level * l : amx)
        if (l->emulated) CHECK(!amx_emulated::tiles_configured());   // every call released its tiles
}

// The dispatch rule: 16 tokens and 16 rows take the tiles (8 TDPBSSDs per 16 x 16 tile and block), fewer take
// the AVX-512 kernel; and the AMX level is the machine's level exactly where the CPU and the OS grant AMX.
TM_TEST("kernels: AMX takes batches of 16 tokens and 16 rows, and is chosen only where granted") {
    const tm_test::kernel_level * emulated = level_named("avx512+amx-emulated");
    CHECK(emulated != nullptr || level_named("avx2") == nullptr);
    if (emulated) {
        std::mt19937 rng(3);
        const int64_t nb = 2, n_in = 64;
        const size_t row = size_t(nb) * sizeof(quant::block_q8_0);
        const std::vector<quant::block_q8_0> w = raw_blocks(size_t(20 * nb), true, rng);
        const std::vector<quant::block_q8_0> x = raw_blocks(size_t(33 * nb), false, rng);
        std::vector<float> y(33 * 20);
        auto products = [&](int64_t n_tok, int64_t r1) {
            const uint64_t before = amx_emulated::tile_products();
            emulated->table.matmul_q8_0(w.data(), row, x.data(), row, n_tok, n_in, 0, r1, y.data(), 20);
            return amx_emulated::tile_products() - before;
        };
        CHECK_EQ(products(15, 20), uint64_t(0));
        CHECK_EQ(products(16, 15), uint64_t(0));
        CHECK_EQ(products(16, 16), uint64_t(8 * nb));
        CHECK_EQ(products(33, 20), uint64_t(2 * 8 * nb));   // two token groups, one row group; the rest AVX-512
    }
    const cpu_features & f = cpu_features_get();
    CHECK_EQ(std::string(kernels_get().isa) == "avx512+amx", f.amx);
    CHECK_EQ(std::string(cpu_isa_name()) == "avx512+amx", f.amx);
    CHECK(!f.amx || f.avx512);
    if (f.amx) {
        const kernel_table t = kernels_for(isa_level::avx512_amx);
        CHECK(t.matmul_q8_0 == &amx::matmul_q8_0);
        CHECK(t.matmul_q4_0 == &amx::matmul_q4_0);
        CHECK(t.matmul_iq4_nl == &amx::matmul_iq4_nl);
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

// matmul() on 1-3 threads: its row tasks (multiples of 4 rows, not of 16) cut the AMX tiles at other places,
// and each thread configures its own tiles; the outputs are still the AVX-512 level's bits.
TM_TEST("kernels: AMX matmul on a thread pool gives the AVX-512 kernels' bits") {
    const tm_test::kernel_level * simd = level_named("avx512") ? level_named("avx512") : level_named("avx512-emulated");
    const std::vector<const tm_test::kernel_level *> amx = amx_levels();
    CHECK(simd != nullptr || amx.empty());
    if (!simd) return;
    std::mt19937 rng(23);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    const int64_t n_in = 32 * 12, n_out = 150, n_tok = 45;
    std::vector<float> x(size_t(n_in * n_tok));
    for (auto & v : x) v = normal(rng);
    thread_pool pool1(1), pool2(2), pool3(3);
    for (ggml_type type : amx_types) {
        const std::vector<uint8_t> w = raw_weights(type, n_out, n_in / 32, rng);
        std::vector<uint8_t> scratch(matmul_scratch_bytes(type, n_in, n_tok));
        std::vector<float> want(size_t(n_tok * n_out)), got(want.size());
        matmul(pool1, simd->table, type, w.data(), n_out, n_in, x.data(), n_tok, want.data(), scratch.data(), scratch.size());
        for (const tm_test::kernel_level * l : amx)
            for (thread_pool * p : {&pool1, &pool2, &pool3}) {
                matmul(*p, l->table, type, w.data(), n_out, n_in, x.data(), n_tok, got.data(), scratch.data(), scratch.size());
                const int diffs = std::memcmp(got.data(), want.data(), got.size() * 4) != 0;
                if (diffs) std::fprintf(stderr, "    %s, type %u, on %d threads differs from %s\n", l->name, unsigned(type), p->n_threads(), simd->name);
                CHECK_EQ(diffs, 0);
            }
    }
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
    const int64_t nb = 33, n_out = 71, n_tok = 53, n_in = nb * 32;
    for (ggml_type type : amx_types) {
        const size_t wrow = quant::row_bytes(type, n_in), xrow = size_t(nb) * sizeof(quant::block_q8_0);
        const std::vector<uint8_t> w = raw_weights(type, n_out, nb, rng);
        const std::vector<quant::block_q8_0> x = raw_blocks(size_t(n_tok * nb), false, rng);
        std::vector<float> a(size_t(n_tok * n_out)), b(a.size());
        matmul_rows_for(real->table, type)(w.data(), wrow, x.data(), xrow, n_tok, n_in, 0, n_out, a.data(), n_out);
        matmul_rows_for(emulated->table, type)(w.data(), wrow, x.data(), xrow, n_tok, n_in, 0, n_out, b.data(), n_out);
        CHECK_EQ(std::memcmp(a.data(), b.data(), a.size() * 4), 0);
    }
}
