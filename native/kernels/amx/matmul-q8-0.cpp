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
#define TM_AMX_SIMD_LEVEL avx512_emulated
#elif defined(TM_KERNELS_AMX)
#include <immintrin.h>
#define TM_AMX_LEVEL amx
#define TM_AMX_SIMD_LEVEL avx512
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

using namespace avx512_vnni;

constexpr int k_quads = k_pack_quads;     // rows of a B tile: the block's 4-byte groups
constexpr int k_tok = int(k_amx_tile_tokens);
constexpr int k_rows = int(k_amx_tile_rows);
static_assert(k_tok == k_pack_tokens, "a B tile holds one packed group of tokens");

// tmm0/tmm1 B (8 rows x 4 n bytes) and tmm2/tmm3 A (m rows x 32 bytes), alternating by block; tmm4..tmm7 C
// (m rows x 4 n bytes), rotating by block (row_group's pipeline).
void configure_tiles(int m, int n) {
    tile_config cfg;
    std::memset(&cfg, 0, sizeof cfg);
    cfg.palette_id = 1;
    for (int i = 0; i < 2; ++i) {
        cfg.rows[i] = k_quads;
        cfg.colsb[i] = uint16_t(4 * n);
        cfg.rows[2 + i] = uint8_t(m);
        cfg.colsb[2 + i] = quant::qk8_0;
    }
    for (int i = 4; i < 8; ++i) {
        cfg.rows[i] = uint8_t(m);
        cfg.colsb[i] = uint16_t(4 * n);
    }
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

// A row group's weights as the tiles read them: per block, the m rows' 32 int8 weights side by side (one
// contiguous, 64-byte aligned A tile of stride 32: the GGUF rows, 34-byte Q8_0 blocks, put half of a tile's
// rows across two cache lines, and split loads tripled the tile loads' cost) and their 16 F32 scales (zero past
// m). Written once per row group and pass over the tokens (k_group_block bytes per block), for every format.
constexpr size_t k_group_quads = size_t(k_rows) * quant::qk8_0;                  // 512
constexpr size_t k_group_block = k_group_quads + sizeof(float) * k_rows;         // + 64

// Rows w .. w + m - 1 (stride wb), nb blocks each, into group (nb * k_group_block bytes): Q8_0 copied, Q4_0 and
// IQ4_NL decoded as the SIMD levels decode them (int8_weights).
template <typename Block>
void prepare_group(const char * w, size_t wb, int m, int64_t nb, uint8_t * group) {
    for (int64_t b = 0; b < nb; ++b) {
        uint8_t * g = group + size_t(b) * k_group_block;
        float * dw = reinterpret_cast<float *>(g + k_group_quads);
        for (int r = 0; r < k_rows; ++r) {
            if (r < m) {
                const Block & blk = reinterpret_cast<const Block *>(w + size_t(r) * wb)[b];
                _mm256_store_si256(reinterpret_cast<__m256i *>(g + size_t(r) * quant::qk8_0), int8_weights<Block>::values(blk));
                dw[r] = _cvtsh_ss(blk.d);
            } else {
                dw[r] = 0.0f;
            }
        }
    }
}

// Block B's dots of the group's m rows and n tokens into the zeroed C tile TC, through B tile TB and A tile TA.
#define TM_AMX_PRODUCT(B, TB, TA, TC)                                                      \
    do {                                                                                   \
        TM_TILE_LOADD(TB, pack + size_t(B) * k_pack_block, 4 * k_tok);                     \
        TM_TILE_LOADD(TA, group + size_t(B) * k_group_block, quant::qk8_0);                \
        TM_TILE_ZERO(TC);                                                                  \
        TM_TILE_DPBSSD(TC, TA, TB);                                                        \
    } while (0)

// Block B's dots (stored in dots[D]) folded into the 16 rows' accumulators, 16 tokens a zmm: the step of
// kernels/block-step/step.h lane by lane, acc = fma(d_w * d_x (rounded), float(dot), acc). Rows past m and
// tokens past n compute with scale 0 (dw and the pack's scales are zero there) and are never stored.
#define TM_AMX_FOLD(B, D)                                                                               \
    do {                                                                                                \
        const __m512 dx = _mm512_load_ps(reinterpret_cast<const float *>(pack + size_t(B) * k_pack_block + k_pack_quad_bytes)); \
        const float * dwb = reinterpret_cast<const float *>(group + size_t(B) * k_group_block + k_group_quads); \
        _Pragma("GCC unroll 16") for (int r = 0; r < k_rows; ++r) {                                     \
            const __m512 scale = _mm512_mul_ps(_mm512_set1_ps(dwb[r]), dx);                             \
            acc[r] = _mm512_fmadd_ps(scale, _mm512_cvtepi32_ps(_mm512_load_si512(dots[D][r])), acc[r]); \
        }                                                                                               \
    } while (0)

// Iteration b of row_group's pipeline, b % 4 = I: block b + 3's product into C tile 4 + (b + 3) % 4, block
// b + 2's C tile stored into dots[(b + 2) % 4], block b's dots (stored two iterations earlier) folded.
#define TM_AMX_STEP(I, TB, TA, TC_NEXT, TC_STORE)                                     \
    do {                                                                              \
        const int64_t bi = b + (I);                                                   \
        if (bi >= nb) break;                                                          \
        if (bi + 3 < nb) TM_AMX_PRODUCT(bi + 3, TB, TA, TC_NEXT);                     \
        if (bi + 2 < nb) TM_TILE_STORED(TC_STORE, dots[((I) + 2) % 4], 4 * k_tok);    \
        TM_AMX_FOLD(bi, (I));                                                         \
    } while (0)

// GCC 12 reports the deliberately undefined pass-through operand of its own _mm512_cvtepi32_ps (all lanes
// written, mask all ones) as maybe uninitialized once inlined here.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

// One group of m <= 16 rows (prepared in group) x the n <= 16 packed tokens of pack, every block:
// y[t * ldy + r]. Tiles configured by the caller for (m, n). The accumulators stay in registers over the whole
// row. The tile unit works ahead of the fold: while block b is folded, block b + 2's C tile is being stored and
// block b + 3's product computed (four C tiles in rotation), so the fold never waits on a product or its store.
void row_group(const uint8_t * group, int m, int64_t nb, const uint8_t * pack, int n, float * y, int64_t ldy) {
    __m512 acc[k_rows];
#pragma GCC unroll 16
    for (int r = 0; r < k_rows; ++r) acc[r] = _mm512_setzero_ps();
    alignas(64) int32_t dots[4][k_rows][k_tok];
    TM_AMX_PRODUCT(0, 0, 2, 4);
    if (nb > 1) TM_AMX_PRODUCT(1, 1, 3, 5);
    if (nb > 2) TM_AMX_PRODUCT(2, 0, 2, 6);
    TM_TILE_STORED(4, dots[0], 4 * k_tok);
    if (nb > 1) TM_TILE_STORED(5, dots[1], 4 * k_tok);
    for (int64_t b = 0; b < nb; b += 4) {
        TM_AMX_STEP(0, 1, 3, 7, 6);
        TM_AMX_STEP(1, 0, 2, 4, 7);
        TM_AMX_STEP(2, 1, 3, 5, 4);
        TM_AMX_STEP(3, 0, 2, 6, 5);
    }
    // Every accumulator stored by a constant index (a loop to m would make the array addressable: GCC then kept
    // it on the stack, a load and a store around every fma).
    alignas(64) float out[k_rows][k_tok];
#pragma GCC unroll 16
    for (int r = 0; r < k_rows; ++r) _mm512_store_ps(out[r], acc[r]);
    for (int r = 0; r < m; ++r)
        for (int t = 0; t < n; ++t) y[t * ldy + r] = out[r][t];
}

#pragma GCC diagnostic pop

#undef TM_AMX_STEP
#undef TM_AMX_FOLD
#undef TM_AMX_PRODUCT

// Packed activations per pass over the rows (row_group's B operand, read from L2).
constexpr size_t k_amx_pass_bytes = size_t(1) << 20;

// Rows r0..r1 x every token, 16 rows and 16 tokens at a time; the last group of fewer than 16 rows (or tokens)
// takes a tile shape of that many. Batches of fewer than k_amx_min_tokens tokens take the AVX-512 kernel of
// the same numerics (simd), which reads the weights faster there; the scalar reference (same bits) only when
// the scratch buffers cannot be allocated.
template <typename Block>
void rows(matmul_rows_kernel * simd, matmul_rows_kernel * reference, const void * w, size_t wb, const void * x,
          size_t xb, int64_t n_tok, int64_t n_in, int64_t r0, int64_t r1, float * y, int64_t ldy) {
    if (n_tok <= 0 || r1 <= r0) return;
    if (n_tok < k_amx_min_tokens) {
        simd(w, wb, x, xb, n_tok, n_in, r0, r1, y, ldy);
        return;
    }
    const int64_t nb = n_in / quant::qk8_0;
    const int64_t groups = (r1 - r0 + k_rows - 1) / k_rows;
    const int64_t token_groups = (n_tok + k_tok - 1) / k_tok;
    const size_t group_pack = size_t(nb) * k_pack_block;
    // Tokens in passes of up to k_amx_pass_bytes of packed activations (from L2), each pass walking every row
    // group once and its token groups inside, so that a group's rows are read from memory and prepared once per
    // pass (16 rows of a 2048-wide matrix: 36 KB, from L1 or L2 for each token group).
    const int64_t pass_groups = std::clamp<int64_t>(int64_t(k_amx_pass_bytes / group_pack), 1, token_groups);
    uint8_t * pack = scratch_space<0>(size_t(pass_groups) * group_pack);
    uint8_t * group = scratch_space<1>(size_t(nb) * k_group_block);
    if (!pack || !group) {
        reference(w, wb, x, xb, n_tok, n_in, r0, r1, y, ldy);
        return;
    }
    const char * wc = static_cast<const char *>(w) + size_t(r0) * wb;
    const char * xc = static_cast<const char *>(x);
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
    for (int64_t p0 = 0; p0 < token_groups; p0 += pass_groups) {
        const int64_t p1 = std::min(token_groups, p0 + pass_groups);
        for (int64_t tg = p0; tg < p1; ++tg)
            pack_tokens<0>(xc + size_t(tg * k_tok) * xb, xb, int(std::min<int64_t>(k_tok, n_tok - tg * k_tok)), nb, pack + size_t(tg - p0) * group_pack);
        for (int64_t g = 0; g < groups; ++g) {
            const int m = int(std::min<int64_t>(k_rows, r1 - r0 - g * k_rows));
            prepare_group<Block>(wc + size_t(g * k_rows) * wb, wb, m, nb, group);
            for (int64_t tg = p0; tg < p1; ++tg) {
                const int n = int(std::min<int64_t>(k_tok, n_tok - tg * k_tok));
                if (m != shape_m || n != shape_n) {
                    configure_tiles(m, n);
                    shape_m = m;
                    shape_n = n;
                }
                row_group(group, m, nb, pack + size_t(tg - p0) * group_pack, n, y + tg * k_tok * ldy + r0 + g * k_rows, ldy);
            }
        }
    }
    load_config(callers);
}

} // namespace

void matmul_q8_0(const void * w, size_t wb, const void * x, size_t xb, int64_t n_tok, int64_t n_in, int64_t r0,
                 int64_t r1, float * y, int64_t ldy) {
    rows<quant::block_q8_0>(TM_AMX_SIMD_LEVEL::matmul_q8_0, block_step_ref::matmul_q8_0, w, wb, x, xb, n_tok, n_in, r0, r1, y, ldy);
}

void matmul_q4_0(const void * w, size_t wb, const void * x, size_t xb, int64_t n_tok, int64_t n_in, int64_t r0,
                 int64_t r1, float * y, int64_t ldy) {
    rows<quant::block_q4_0>(TM_AMX_SIMD_LEVEL::matmul_q4_0, block_step_ref::matmul_q4_0, w, wb, x, xb, n_tok, n_in, r0, r1, y, ldy);
}

void matmul_iq4_nl(const void * w, size_t wb, const void * x, size_t xb, int64_t n_tok, int64_t n_in, int64_t r0,
                   int64_t r1, float * y, int64_t ldy) {
    rows<quant::block_iq4_nl>(TM_AMX_SIMD_LEVEL::matmul_iq4_nl, block_step_ref::matmul_iq4_nl, w, wb, x, xb, n_tok, n_in, r0, r1, y, ldy);
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
