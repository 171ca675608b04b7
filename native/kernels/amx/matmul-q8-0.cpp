// AMX int8 matmul rows for the 32-block weights against Q8_0 activations — Q8_0, Q4_0 and IQ4_NL — for every
// token count, decode included (docs/kernels.md, "The AMX path"). Compiled twice: TM_KERNELS_AMX (the
// instructions, -mamx-tile -mamx-int8 and the AVX-512 flags) and TM_KERNELS_AMX_EMULATED (the C++ tests: the
// scalar tile emulator and SIMDe's AVX-512).
//
// NOTE(amx-blocks): the numerics are kernels/block-step/step.h's (the avx512 level's too: the same bits), per
// (row, token): the exact int32 dot of each 32-block, then acc = fma(d_w * d_x, float(dot), acc) in block order. One TDPBSSD computes those dots for
// up to 16 rows x 16 tokens of one block: A = m <= 16 weight rows x 32 bytes, for Q8_0 read in place from
// the GGUF rows (row stride = the row's bytes, the base past the block's F16 scale), for Q4_0 and IQ4_NL the
// block's rows decoded to int8 on the stack (the decoders of kernels/simd/int8-weights.h); B = the block of
// n <= 16 tokens in VNNI layout (8 rows of 4 n bytes: row k holds bytes 4k..4k+3 of every token), repacked
// once per 16 tokens per call by kernels/block-step/vnni-pack.h (the AVX-512 prompt tile's layout too); C =
// m x n int32 block dots, stored and folded with the step above, lane by lane, into per-row accumulators of 16 tokens (one zmm), or for one token into one zmm of 16 rows. Every
// token count and row range takes the tiles (fewer rows or tokens: a smaller tile shape), so a row's result
// never depends on its batch or range.
#if defined(TM_KERNELS_AMX_EMULATED)
#include "kernels/simd/emulated-avx512.h"
#define TM_AMX_LEVEL amx_emulated
#elif defined(TM_KERNELS_AMX)
#include <immintrin.h>
#define TM_AMX_LEVEL amx
#endif

#include "kernels/amx/amx.h"
#include "kernels/amx/tile-ops.h"
#include "kernels/block-step/reference.h"
#include "kernels/block-step/vnni-pack.h"
#include "kernels/simd/int8-weights.h"
#include "quant/iq4-nl.h"
#include "quant/q4-0.h"
#include "quant/q8-0.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <new>

// Compiled with -mfma: GCC would contract a multiply and an add into an FMA of its own choosing even through
// the vector intrinsics (it did: a separate multiply and add in the fold below passed the bitwise tests until
// this line). Contraction off leaves exactly the one FMA per block written here.
#pragma GCC optimize("fp-contract=off")

namespace tmill::kernels::TM_AMX_LEVEL {

namespace {

using quant::block_q8_0;
using namespace avx512_vnni;

constexpr int k_quads = k_pack_quads;     // rows of a B tile: the block's 4-byte groups
constexpr int k_tok = int(k_amx_tile_tokens);
constexpr int k_rows = int(k_amx_tile_rows);
constexpr int k_groups = 4;                 // row groups per B tile load: one C tile each (tmm4..tmm7)
static_assert(k_tok == k_pack_tokens, "a B tile holds one packed group of tokens");

// tmm0: B (8 rows x 4 n bytes); tmm1..tmm3: A (m rows x 32 bytes); tmm4..tmm7: C (m rows x 4 n bytes).
void configure_tiles(int m, int n) {
    tile_config cfg;
    std::memset(&cfg, 0, sizeof cfg);
    cfg.palette_id = 1;
    cfg.rows[0] = k_quads;
    cfg.colsb[0] = uint16_t(4 * n);
    for (int i = 1; i < 4; ++i) { cfg.rows[i] = uint8_t(m); cfg.colsb[i] = quant::qk8_0; }
    for (int i = 4; i < 8; ++i) { cfg.rows[i] = uint8_t(m); cfg.colsb[i] = uint16_t(4 * n); }
    TM_TILE_LOADCONFIG(&cfg);
}

// c in force, as LDTILECFG puts it on the CPU: palette 0 (none) is the init state TILERELEASE gives, the only
// way the strict emulator takes.
void load_config(const tile_config & c) {
    if (c.palette_id == 0)
        TM_TILE_RELEASE();
    else
        TM_TILE_LOADCONFIG(&c);
}

// Where the A tile of block b of m rows (w, stride wb) comes from: row r at quads(...) + r * stride.
// Q8_0: the rows themselves.
struct q8_0_weights {
    using block = quant::block_q8_0;
    static const char * quads(const char * w, size_t wb, int64_t b, int, int8_t (*)[quant::qk8_0], size_t & stride) {
        stride = wb;
        return w + size_t(b) * sizeof(block) + offsetof(block, qs);
    }
};

// The nibble formats: the block of each of the m rows decoded to its 32 int8 weights in staging.
template <typename Block>
struct decoded_weights {
    using block = Block;
    static const char * quads(const char * w, size_t wb, int64_t b, int m, int8_t (*staging)[quant::qk8_0], size_t & stride) {
        for (int r = 0; r < m; ++r) {
            const block * blk = reinterpret_cast<const block *>(w + size_t(r) * wb) + b;
            _mm256_storeu_si256(reinterpret_cast<__m256i *>(staging[r]), int8_weights<Block>::values(*blk));
        }
        stride = quant::qk8_0;
        return reinterpret_cast<const char *>(staging);
    }
};
using q4_0_weights = decoded_weights<quant::block_q4_0>;
using iq4_nl_weights = decoded_weights<quant::block_iq4_nl>;

// Row group G's block dots: its A tile into TA, the product with B (tmm0) into the zeroed C tile TC.
#define TM_AMX_GROUP(G, TA, TC)                                                                 \
    do {                                                                                        \
        size_t stride = 0;                                                                      \
        const char * a = W::quads(w + size_t(k_rows * (G)) * wb, wb, b, m, staging[G], stride); \
        TM_TILE_LOADD(TA, a, stride);                                                           \
        TM_TILE_ZERO(TC);                                                                       \
        TM_TILE_DPBSSD(TC, TA, 0);                                                              \
    } while (0)

// GCC 12 reports the deliberately undefined pass-through operand of its own _mm512_cvtepi32_ps (all lanes
// written, mask all ones) as maybe uninitialized once inlined here.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

// Groups row groups of m rows each (Groups > 1 only with m = 16), the first at w (row stride wb), x the n
// packed tokens: y[t * ldy + 16 g + r]. Tiles configured by the caller for (m, n). The groups share each B
// tile load and their four C tiles are independent, so their TDPBSSDs can overlap. The fold runs the step
// of kernels/block-step/step.h lane by lane (d_w * d_x rounded, then one fma): with several tokens one zmm
// per row holds its 16 tokens; with one (decode, OneToken, n = 1) the C tile is a column of m int32 stored
// contiguously and one zmm holds the 16 rows, so the fold costs one multiply and one fma per row group.
template <typename W, int Groups, bool OneToken>
void row_groups(const char * w, size_t wb, int m, int64_t nb, const uint8_t * pack, int n, float * y, int64_t ldy) {
    using block = typename W::block;
    constexpr int acc_rows = OneToken ? 1 : k_rows;   // zmm accumulators per group
    constexpr int stride = OneToken ? 4 : 4 * k_tok;  // C store stride: one int32, or 16
    __m512 acc[Groups][acc_rows];
    for (auto & g : acc)
        for (__m512 & a : g) a = _mm512_setzero_ps();
    alignas(64) int32_t dots[Groups][k_rows * k_tok] = {};     // C tiles (past m rows and n tokens: zero or unused)
    alignas(64) int8_t staging[Groups][k_rows][quant::qk8_0]; // decoded weights (formats not read in place)
    alignas(32) uint16_t dw16[k_rows] = {};                   // one token: a group's F16 row scales (zero past m)
    for (int64_t b = 0; b < nb; ++b) {
        const uint8_t * xp = pack + size_t(b) * k_pack_block;
        TM_TILE_LOADD(0, xp, 4 * k_tok);
        TM_AMX_GROUP(0, 1, 4);
        if constexpr (Groups > 1) TM_AMX_GROUP(1, 2, 5);
        if constexpr (Groups > 2) TM_AMX_GROUP(2, 3, 6);
        if constexpr (Groups > 3) TM_AMX_GROUP(3, 1, 7);
        TM_TILE_STORED(4, dots[0], stride);
        if constexpr (Groups > 1) TM_TILE_STORED(5, dots[1], stride);
        if constexpr (Groups > 2) TM_TILE_STORED(6, dots[2], stride);
        if constexpr (Groups > 3) TM_TILE_STORED(7, dots[3], stride);
        const float * dx = reinterpret_cast<const float *>(xp + k_pack_quad_bytes);
        for (int g = 0; g < Groups; ++g) {
            const char * wg = w + size_t(k_rows * g) * wb;
            if constexpr (OneToken) {
                for (int r = 0; r < m; ++r) dw16[r] = reinterpret_cast<const block *>(wg + size_t(r) * wb)[b].d;
                const __m512 dw = _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i *>(dw16)));
                const __m512 scale = _mm512_mul_ps(dw, _mm512_set1_ps(dx[0]));
                acc[g][0] = _mm512_fmadd_ps(scale, _mm512_cvtepi32_ps(_mm512_load_si512(dots[g])), acc[g][0]);
            } else {
                const __m512 dxv = _mm512_loadu_ps(dx);
                for (int r = 0; r < m; ++r) {
                    const float dw = _cvtsh_ss(reinterpret_cast<const block *>(wg + size_t(r) * wb)[b].d);
                    const __m512 scale = _mm512_mul_ps(_mm512_set1_ps(dw), dxv);
                    acc[g][r] = _mm512_fmadd_ps(scale, _mm512_cvtepi32_ps(_mm512_load_si512(dots[g] + k_tok * r)), acc[g][r]);
                }
            }
        }
    }
    for (int g = 0; g < Groups; ++g) {
        alignas(64) float out[k_tok];
        if constexpr (OneToken) {
            _mm512_store_ps(out, acc[g][0]);
            for (int r = 0; r < m; ++r) y[k_rows * g + r] = out[r];
        } else {
            for (int r = 0; r < m; ++r) {
                _mm512_store_ps(out, acc[g][r]);
                for (int t = 0; t < n; ++t) y[t * ldy + k_rows * g + r] = out[t];
            }
        }
    }
}

// The row groups of one 16-token group: OneToken picks the decode fold.
template <typename W, int Groups>
void row_groups_for(const char * w, size_t wb, int m, int64_t nb, const uint8_t * pack, int n, float * y, int64_t ldy) {
    if (n == 1)
        row_groups<W, Groups, true>(w, wb, m, nb, pack, n, y, ldy);
    else
        row_groups<W, Groups, false>(w, wb, m, nb, pack, n, y, ldy);
}

#pragma GCC diagnostic pop

#undef TM_AMX_GROUP

// Rows r0..r1 x every token, 16 tokens and up to 64 rows at a time; the last group of fewer than 16 rows (or
// tokens) takes a tile shape of that many. The scalar reference (same bits) only when the pack buffer cannot
// be allocated.
template <typename W>
void rows(matmul_rows_kernel * reference, const void * w, size_t wb, const void * x, size_t xb, int64_t n_tok,
          int64_t n_in, int64_t r0, int64_t r1, float * y, int64_t ldy) {
    if (n_tok <= 0 || r1 <= r0) return;
    const int64_t nb = n_in / quant::qk8_0;
    uint8_t * pack = scratch_space<0>(size_t(nb) * k_pack_block);
    if (!pack) {
        reference(w, wb, x, xb, n_tok, n_in, r0, r1, y, ldy);
        return;
    }
    const char * wc = static_cast<const char *>(w) + size_t(r0) * wb;
    const char * xc = static_cast<const char *>(x);
    const int64_t full = (r1 - r0) / k_rows;
    const int tail = int((r1 - r0) % k_rows);
    // Configured here, on the thread that runs this call, and left as this call found it: released when no
    // configuration was in force (no tile state stays on a pool worker between calls, none to save at a context
    // switch), the caller's configuration loaded again otherwise. This thread may be shared with other native
    // code — a libuv worker runs Model.evaluate, and node-llama-cpp's decode on the next task — and ggml's AMX
    // kernels configure a thread's tiles once and then assume the configuration stays: with TILERELEASE alone
    // their next TILEZERO raised #UD (SIGILL) in a process running both (tile data does not outlive a call on
    // either side, so only the configuration is restored). A shape is loaded only when it changes (LDTILECFG
    // also zeroes every tile).
    tile_config callers;
    TM_TILE_STORECONFIG(&callers);
    int shape_m = 0, shape_n = 0;
    auto shape = [&](int m, int n) {
        if (m == shape_m && n == shape_n) return;
        configure_tiles(m, n);
        shape_m = m;
        shape_n = n;
    };
    for (int64_t t = 0; t < n_tok; t += k_tok) {
        const int n = int(std::min<int64_t>(k_tok, n_tok - t));
        pack_tokens<0>(xc + size_t(t) * xb, xb, n, nb, pack);
        float * yt = y + t * ldy + r0;
        int64_t g = 0;
        if (full > 0) shape(k_rows, n);
        for (; g + k_groups <= full; g += k_groups)
            row_groups_for<W, k_groups>(wc + size_t(g * k_rows) * wb, wb, k_rows, nb, pack, n, yt + g * k_rows, ldy);
        const char * wg = wc + size_t(g * k_rows) * wb;
        switch (full - g) {
            case 3: row_groups_for<W, 3>(wg, wb, k_rows, nb, pack, n, yt + g * k_rows, ldy); break;
            case 2: row_groups_for<W, 2>(wg, wb, k_rows, nb, pack, n, yt + g * k_rows, ldy); break;
            case 1: row_groups_for<W, 1>(wg, wb, k_rows, nb, pack, n, yt + g * k_rows, ldy); break;
            default: break;
        }
        if (tail > 0) {
            shape(tail, n);
            row_groups_for<W, 1>(wc + size_t(full * k_rows) * wb, wb, tail, nb, pack, n, yt + full * k_rows, ldy);
        }
    }
    load_config(callers);
}

} // namespace

void matmul_q8_0(const void * w, size_t wb, const void * x, size_t xb, int64_t n_tok, int64_t n_in, int64_t r0,
                 int64_t r1, float * y, int64_t ldy) {
    rows<q8_0_weights>(block_step_ref::matmul_q8_0, w, wb, x, xb, n_tok, n_in, r0, r1, y, ldy);
}

void matmul_q4_0(const void * w, size_t wb, const void * x, size_t xb, int64_t n_tok, int64_t n_in, int64_t r0,
                 int64_t r1, float * y, int64_t ldy) {
    rows<q4_0_weights>(block_step_ref::matmul_q4_0, w, wb, x, xb, n_tok, n_in, r0, r1, y, ldy);
}

void matmul_iq4_nl(const void * w, size_t wb, const void * x, size_t xb, int64_t n_tok, int64_t n_in, int64_t r0,
                   int64_t r1, float * y, int64_t ldy) {
    rows<iq4_nl_weights>(block_step_ref::matmul_iq4_nl, w, wb, x, xb, n_tok, n_in, r0, r1, y, ldy);
}

void fill(kernel_table & t) {
    t.matmul_q8_0 = matmul_q8_0;
    t.matmul_q4_0 = matmul_q4_0;
    t.matmul_iq4_nl = matmul_iq4_nl;
}

#if defined(TM_KERNELS_AMX_EMULATED)
tile_config tile_config_in_force() {
    tile_config c;
    TM_TILE_STORECONFIG(&c);
    return c;
}
void load_tile_config(const tile_config & c) { load_config(c); }
uint64_t tile_products() { return tile_emulator::thread_state().products; }
#endif

} // namespace tmill::kernels::TM_AMX_LEVEL
