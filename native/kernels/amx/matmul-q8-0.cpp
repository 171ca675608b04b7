// AMX int8 matmul rows for the 32-block weights against Q8_0 activations — Q8_0, Q4_0 and IQ4_NL — for
// prompt batches (docs/kernels.md, "The AMX path"). Compiled twice: TM_KERNELS_AMX (the instructions,
// -mamx-tile -mamx-int8 and the AVX-512 flags) and TM_KERNELS_AMX_EMULATED (the C++ tests: the scalar tile
// emulator and SIMDe's AVX-512).
//
// NOTE(amx-q8): the arithmetic is the SIMD levels' (NOTE(q8-matmul) in kernels/simd/matmul-q8-0.cpp), so a
// row's result has the same bits whether its batch took this kernel or the AVX-512 one: per (row, token) 8
// float lanes, lane j accumulating fma(d_w * d_x, lane_j, acc_j) block after block, where lane_j is the
// exact int32 sum of the 4 products of block elements 4j..4j+3; at the end ((l0+l4)+(l2+l6)) +
// ((l1+l5)+(l3+l7)) (hsum8's order). The tiles therefore must not sum the 8 lanes of a block (TDPBSSD sums
// its K quads): each TDPBSSD takes one lane, K = one quad. A: 16 weight rows x 4 bytes — for Q8_0 read in
// place from the GGUF rows with the row stride (no repacked copy of the weights), for Q4_0 and IQ4_NL from
// the block's 16 rows decoded to int8 on the stack (the decoders of kernels/simd/int8-weights.h, the SIMD
// levels' own); B: 1 row x 64 bytes, that lane of 16 tokens, from activations repacked once per call; C: 16
// rows x 16 tokens of int32 lane sums, stored and folded into the float lanes with AVX-512 (16 tokens per
// zmm). The SIMD levels compute Q4_0 and IQ4_NL in the same lanes and float steps as Q8_0.
#if defined(TM_KERNELS_AMX_EMULATED)
#include "kernels/simd/emulated-avx512.h"
#define TM_AMX_LEVEL amx_emulated
#define TM_AMX_FALLBACK avx512_emulated
#elif defined(TM_KERNELS_AMX)
#include <immintrin.h>
#define TM_AMX_LEVEL amx
#define TM_AMX_FALLBACK avx512
#endif

#include "kernels/amx/amx.h"
#include "kernels/amx/tile-ops.h"
#include "kernels/simd/int8-weights.h"
#include "quant/iq4-nl.h"
#include "quant/q4-0.h"
#include "quant/q8-0.h"

#include <cstddef>
#include <cstring>
#include <new>

#if defined(TM_KERNELS_AMX_EMULATED)
namespace tmill::kernels::avx512_emulated {   // the tests' emulated AVX-512 level (test/cpp/kernel-levels.cpp)
matmul_rows_kernel matmul_q8_0;
matmul_rows_kernel matmul_q4_0;
matmul_rows_kernel matmul_iq4_nl;
}
#endif

namespace tmill::kernels::TM_AMX_LEVEL {

namespace {

using quant::block_q8_0;

constexpr int k_lanes = quant::qk8_0 / 4;   // int32 lanes per 32-block, 4 products each
constexpr int k_tok = int(k_amx_tile_tokens);
constexpr int k_rows = int(k_amx_tile_rows);

// One 32-block of 16 tokens, repacked: lane j's 4 bytes of token t at 64 j + 4 t (B tile j is one 64-byte
// row), then the 16 scales as F32.
constexpr size_t k_pack_lanes = size_t(k_lanes) * 4 * k_tok;
constexpr size_t k_pack_block = k_pack_lanes + sizeof(float) * k_tok;

// Tiles: tmm0/tmm1 weights (16 rows x 4 bytes), tmm2/tmm3 activations (1 row x 64 bytes), tmm4..tmm7 lane
// sums (16 x 16 int32); lanes go two by two through the A/B pairs and four at a time through the C tiles.
void configure_tiles() {
    tile_config cfg;
    std::memset(&cfg, 0, sizeof cfg);
    cfg.palette_id = 1;
    for (int i = 0; i < 2; ++i) { cfg.rows[i] = k_rows; cfg.colsb[i] = 4; }
    for (int i = 2; i < 4; ++i) { cfg.rows[i] = 1; cfg.colsb[i] = 4 * k_tok; }
    for (int i = 4; i < 8; ++i) { cfg.rows[i] = k_rows; cfg.colsb[i] = 4 * k_tok; }
    TM_TILE_LOADCONFIG(&cfg);
}

// The repacked activations of one call, per thread: grown to the largest n_in once, never per step.
// nullptr when that allocation fails (the caller then takes the AVX-512 kernel). A type of this file's own
// (internal linkage) rather than a std::unique_ptr instantiation, which the linker could share with code
// built without these ISA flags.
struct pack_buffer {
    uint8_t * data = nullptr;
    size_t capacity = 0;
    ~pack_buffer() { delete[] data; }
};

uint8_t * pack_space(size_t bytes) {
    static thread_local pack_buffer buf;
    if (buf.capacity < bytes) {
        delete[] buf.data;
        buf.data = new (std::nothrow) uint8_t[bytes];
        buf.capacity = buf.data ? bytes : 0;
    }
    return buf.data;
}

// Tokens x .. x + 15 (row stride xb), nb blocks each, into pack (nb * k_pack_block bytes).
void pack_tokens(const char * x, size_t xb, int64_t nb, uint8_t * pack) {
    for (int64_t b = 0; b < nb; ++b) {
        uint8_t * dst = pack + size_t(b) * k_pack_block;
        float scales[k_tok];
        for (int t = 0; t < k_tok; ++t) {
            const block_q8_0 * blk = reinterpret_cast<const block_q8_0 *>(x + size_t(t) * xb) + b;
            for (int j = 0; j < k_lanes; ++j) std::memcpy(dst + 64 * j + 4 * t, blk->qs + 4 * j, 4);
            scales[t] = _cvtsh_ss(blk->d);
        }
        std::memcpy(dst + k_pack_lanes, scales, sizeof scales);
    }
}

// Where the A tiles of one block of 16 rows come from: lane j of row r at lanes(...) + r * stride + 4 j.
// Q8_0: the rows themselves.
struct q8_0_weights {
    using block = quant::block_q8_0;
    static const char * lanes(const char * w, size_t wb, int64_t b, int8_t (*)[quant::qk8_0], size_t & stride) {
        stride = wb;
        return w + size_t(b) * sizeof(block) + offsetof(block, qs);
    }
};

// The nibble formats: the block of each row decoded to its 32 int8 weights in staging (16 x 32 bytes).
template <typename Block, __m256i (*Decode)(const uint8_t *)>
struct decoded_weights {
    using block = Block;
    static const char * lanes(const char * w, size_t wb, int64_t b, int8_t (*staging)[quant::qk8_0], size_t & stride) {
        for (int r = 0; r < k_rows; ++r) {
            const block * blk = reinterpret_cast<const block *>(w + size_t(r) * wb) + b;
            _mm256_storeu_si256(reinterpret_cast<__m256i *>(staging[r]), Decode(blk->qs));
        }
        stride = quant::qk8_0;
        return reinterpret_cast<const char *>(staging);
    }
};
__m256i q4_0_values(const uint8_t * qs) { return _mm256_sub_epi8(nibbles32(qs), _mm256_set1_epi8(8)); }
using q4_0_weights = decoded_weights<quant::block_q4_0, q4_0_values>;
using iq4_nl_weights = decoded_weights<quant::block_iq4_nl, iq4nl_levels32>;

// Lane J of one block: A from the weights (lane J of 16 rows at wq + 4 J, row stride ws) into TA, B from the
// pack into TB, their product into the zeroed C tile TC.
#define TM_AMX_LANE(J, TA, TB, TC)               \
    TM_TILE_LOADD(TA, wq + 4 * (J), ws);         \
    TM_TILE_LOADD(TB, xp + 64 * (J), 64);        \
    TM_TILE_ZERO(TC);                            \
    TM_TILE_DPBSSD(TC, TA, TB)

// Lanes J..J+3 through the two A/B pairs into C tiles 4..7, stored to sums[J..J+3].
#define TM_AMX_FOUR_LANES(J)                     \
    TM_AMX_LANE((J) + 0, 0, 2, 4);               \
    TM_AMX_LANE((J) + 1, 1, 3, 5);               \
    TM_AMX_LANE((J) + 2, 0, 2, 6);               \
    TM_AMX_LANE((J) + 3, 1, 3, 7);               \
    TM_TILE_STORED(4, sums[(J) + 0], 4 * k_tok); \
    TM_TILE_STORED(5, sums[(J) + 1], 4 * k_tok); \
    TM_TILE_STORED(6, sums[(J) + 2], 4 * k_tok); \
    TM_TILE_STORED(7, sums[(J) + 3], 4 * k_tok)

// GCC 12 reports the deliberately undefined pass-through operand of its own _mm512_cvtepi32_ps (all lanes
// written, mask all ones) as maybe uninitialized once inlined here.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

// Rows w .. w + 15 (stride wb) x the 16 packed tokens: y[t * ldy + r]. Tiles configured by the caller.
template <typename W>
void tile_16x16(const char * w, size_t wb, int64_t nb, const uint8_t * pack, float * y, int64_t ldy) {
    using block = typename W::block;
    __m512 acc[k_rows][k_lanes];
    for (auto & row : acc)
        for (__m512 & a : row) a = _mm512_setzero_ps();
    alignas(64) int32_t sums[k_lanes][k_rows][k_tok];   // lane j, weight row r, token t
    alignas(64) int8_t staging[k_rows][quant::qk8_0];     // decoded weights (formats not read in place)
    for (int64_t b = 0; b < nb; ++b) {
        size_t ws = 0;
        const char * wq = W::lanes(w, wb, b, staging, ws);
        const uint8_t * xp = pack + size_t(b) * k_pack_block;
        TM_AMX_FOUR_LANES(0);
        TM_AMX_FOUR_LANES(4);
        const __m512 dx = _mm512_loadu_ps(reinterpret_cast<const float *>(xp + k_pack_lanes));
        for (int r = 0; r < k_rows; ++r) {
            const float dw = _cvtsh_ss(reinterpret_cast<const block *>(w + size_t(r) * wb)[b].d);
            const __m512 s = _mm512_mul_ps(_mm512_set1_ps(dw), dx);   // d_w * d_x per token, as the SIMD tiles round it
            for (int j = 0; j < k_lanes; ++j)
                acc[r][j] = _mm512_fmadd_ps(s, _mm512_cvtepi32_ps(_mm512_loadu_si512(sums[j][r])), acc[r][j]);
        }
    }
    for (int r = 0; r < k_rows; ++r) {
        const __m512 * l = acc[r];
        const __m512 v = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(l[0], l[4]), _mm512_add_ps(l[2], l[6])),
                                       _mm512_add_ps(_mm512_add_ps(l[1], l[5]), _mm512_add_ps(l[3], l[7])));
        alignas(64) float out[k_tok];
        _mm512_store_ps(out, v);
        for (int t = 0; t < k_tok; ++t) y[t * ldy + r] = out[t];
    }
}

#pragma GCC diagnostic pop

#undef TM_AMX_FOUR_LANES
#undef TM_AMX_LANE

// Whole 16-token x 16-row groups on the tiles, the rest (and everything when there is no such group) through
// the AVX-512 kernel `simd` of the same format, which gives the same bits.
template <typename W>
void rows(matmul_rows_kernel * simd, const void * w, size_t wb, const void * x, size_t xb, int64_t n_tok, int64_t n_in,
          int64_t r0, int64_t r1, float * y, int64_t ldy) {
    const int64_t tok_amx = n_tok / k_tok * k_tok;
    const int64_t rows_amx = (r1 - r0) / k_rows * k_rows;
    const int64_t nb = n_in / quant::qk8_0;
    uint8_t * pack = tok_amx > 0 && rows_amx > 0 ? pack_space(size_t(nb) * k_pack_block) : nullptr;
    if (!pack) {
        simd(w, wb, x, xb, n_tok, n_in, r0, r1, y, ldy);
        return;
    }
    const char * wc = static_cast<const char *>(w);
    const char * xc = static_cast<const char *>(x);
    // Configured here, on the thread that runs this call, and released before returning: no tile state is
    // left on a pool worker between calls (and none to save at a context switch).
    configure_tiles();
    for (int64_t t = 0; t < tok_amx; t += k_tok) {
        pack_tokens(xc + size_t(t) * xb, xb, nb, pack);
        for (int64_t r = r0; r < r0 + rows_amx; r += k_rows)
            tile_16x16<W>(wc + size_t(r) * wb, wb, nb, pack, y + t * ldy + r, ldy);
    }
    TM_TILE_RELEASE();
    if (r0 + rows_amx < r1) simd(w, wb, x, xb, tok_amx, n_in, r0 + rows_amx, r1, y, ldy);
    if (tok_amx < n_tok) simd(w, wb, xc + size_t(tok_amx) * xb, xb, n_tok - tok_amx, n_in, r0, r1, y + tok_amx * ldy, ldy);
}

} // namespace

void matmul_q8_0(const void * w, size_t wb, const void * x, size_t xb, int64_t n_tok, int64_t n_in, int64_t r0,
                 int64_t r1, float * y, int64_t ldy) {
    rows<q8_0_weights>(TM_AMX_FALLBACK::matmul_q8_0, w, wb, x, xb, n_tok, n_in, r0, r1, y, ldy);
}

void matmul_q4_0(const void * w, size_t wb, const void * x, size_t xb, int64_t n_tok, int64_t n_in, int64_t r0,
                 int64_t r1, float * y, int64_t ldy) {
    rows<q4_0_weights>(TM_AMX_FALLBACK::matmul_q4_0, w, wb, x, xb, n_tok, n_in, r0, r1, y, ldy);
}

void matmul_iq4_nl(const void * w, size_t wb, const void * x, size_t xb, int64_t n_tok, int64_t n_in, int64_t r0,
                   int64_t r1, float * y, int64_t ldy) {
    rows<iq4_nl_weights>(TM_AMX_FALLBACK::matmul_iq4_nl, w, wb, x, xb, n_tok, n_in, r0, r1, y, ldy);
}

void fill(kernel_table & t) {
    t.matmul_q8_0 = matmul_q8_0;
    t.matmul_q4_0 = matmul_q4_0;
    t.matmul_iq4_nl = matmul_iq4_nl;
}

#if defined(TM_KERNELS_AMX_EMULATED)
bool tiles_configured() { return tile_emulator::thread_state().configured; }
uint64_t tile_products() { return tile_emulator::thread_state().products; }
#endif

} // namespace tmill::kernels::TM_AMX_LEVEL
