// AMX int8 matmul rows for the 32-block weights against Q8_0 activations — Q8_0 (in the GGUF rows or repacked
// at load, quant/q8-0-x16.h), Q4_0 and IQ4_NL — and against Q8_1, Q4_1 and Q5_1 with their minimum
// (docs/kernels.md, "The AMX path"). Compiled twice:
// TM_KERNELS_AMX (the instructions, -mamx-tile -mamx-int8 and the AVX-512 flags) and TM_KERNELS_AMX_EMULATED
// (the C++ tests: the scalar tile emulator and SIMDe's AVX-512).
//
// NOTE(amx-blocks): the numerics are kernels/block-step/step.h's (the avx512 level's too: the same bits), per
// (row, token): the exact int32 dot of each 32-block, then acc = fma(d_w * d_x, float(dot), acc) in block
// order (Q4_1 and Q5_1: then acc = fma(m_w, s_x, acc), block_step_min). One TDPBSSD computes those dots for n <= 16 tokens x 16 rows of one block: A = the block of the n
// tokens, a row of 32 bytes each (packed per call from the activations, 64-byte aligned); B = the block of 16
// weight rows in VNNI layout (8 rows of 64 bytes, row k holding bytes 4k..4k+3 of every weight row: the layout
// Q8_0 is repacked into at load, read in place, and that the GGUF rows are converted into per pass); C = n
// rows of 16 int32 block dots, one token's 16 weight rows per C row. C is stored and folded with the step
// above, a zmm of 16 rows per token, into n accumulators that stay in registers over the whole row: the fold
// costs one fma per token and block, so a single token (decode) takes the tiles as cheaply as 16. Every
// token count and row range takes the same products (fewer tokens: a tile of fewer rows; a last group of
// fewer than 16 weight rows: zero weights in the lanes that are never stored), so a row's result never depends
// on its batch or range.
#include "kernels/amx/level.h"

#include "kernels/amx/amx.h"
#include "kernels/amx/passes.h"
#include "kernels/amx/tile-ops.h"
#include "kernels/amx/tile-session.h"
#include "kernels/block-step/reference.h"
#include "kernels/block-step/vnni-pack.h"
#include "kernels/simd/int8-weights.h"
#include "quant/iq4-nl.h"
#include "quant/q4-0-x16.h"
#include "quant/q4-0.h"
#include "quant/q4-1-x16.h"
#include "quant/q4-1.h"
#include "quant/q5-1.h"
#include "quant/q8-0.h"
#include "quant/q8-0-x16.h"
#include "quant/q8-1.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <new>
#include <type_traits>

// Compiled with -mfma: GCC would contract a multiply and an add into an FMA of its own choosing even through
// the vector intrinsics (it did: a separate multiply and add in the fold below passed the bitwise tests until
// this line). Contraction off leaves exactly the one FMA per block written here.
#pragma GCC optimize("fp-contract=off")

namespace tmill::kernels::TM_AMX_LEVEL {

namespace {

using namespace avx512_vnni;
using quant::block_q8_0_x16;

constexpr int k_tok = int(k_amx_tile_tokens);
constexpr int k_rows = int(k_amx_tile_rows);
constexpr int k_quads = quant::k_q8_0_x16_quads;   // rows of a B tile: the block's 4-byte groups
constexpr int k_pair = quant::k_q8_0_x16_blocks;
static_assert(k_rows == quant::k_x16_rows && k_rows == k_tile_weight_rows && quant::qk8_0 == k_tile_block_bytes,
              "a B tile is one block of a 16-row group");

// The activations as the A tiles read them: per block, the tokens' 32 bytes one after another (a 512-byte tile
// of stride 32), then their 16 F32 scales, and against Q8_1 their 16 F32 sums; 64-byte aligned (a Q8_0 row's
// 34-byte blocks would put half of the tile's rows across two cache lines, and split loads tripled the tile
// loads' cost).
constexpr size_t k_act_quads = size_t(k_tok) * quant::qk8_0;   // 512
template <bool Min>
constexpr size_t k_act_block = k_act_quads + sizeof(float) * k_tok * (Min ? 2 : 1);

// The weight formats with a minimum (Q4_1, Q5_1): Q8_1 activations, and the second step of block_step_min.
template <typename Block>
constexpr bool k_has_min = std::is_same_v<Block, quant::block_q4_1> || std::is_same_v<Block, quant::block_q5_1>;
template <typename Block>
using activation_of = std::conditional_t<k_has_min<Block>, quant::block_q8_1, quant::block_q8_0>;

// NOTE(amx-noipa): the buffers the tiles read are filled by functions GCC must not analyse across calls. Built
// at -O1 or -O2 (this build is -O3), GCC 12 deleted every call of the activation packing below as dead: from its
// interprocedural summary (stores through `pack` only) it found no reader of those stores, which are read by
// the tile loads' asm statements inside row_group, reached through row_group_for — and the tiles multiplied
// stale activations. noipa keeps such a call opaque (once per token group and pass: nothing to inline).

// Tokens x .. x + n - 1 (row stride xb; A: Q8_0 or Q8_1 blocks), nb blocks each, into pack (nb * k_act_block
// bytes); the rows, scales and sums past n are never read. Opaque to GCC's interprocedural analysis:
// NOTE(amx-noipa).
template <typename A>
__attribute__((noipa)) void pack_activations(const char * x, size_t xb, int n, int64_t nb, uint8_t * pack) {
    constexpr bool min = std::is_same_v<A, quant::block_q8_1>;
    for (int64_t b = 0; b < nb; ++b) {
        uint8_t * dst = pack + size_t(b) * k_act_block<min>;
        float * dx = reinterpret_cast<float *>(dst + k_act_quads);
        for (int t = 0; t < n; ++t) {
            const A & blk = reinterpret_cast<const A *>(x + size_t(t) * xb)[b];
            _mm256_store_si256(reinterpret_cast<__m256i *>(dst + size_t(t) * quant::qk8_0),
                               _mm256_loadu_si256(reinterpret_cast<const __m256i *>(blk.qs)));
            dx[t] = _cvtsh_ss(blk.d);
            if constexpr (min) dx[k_tok + t] = _cvtsh_ss(blk.s);
        }
    }
}

// Rows w .. w + m - 1 (stride wb), nb blocks each, as the repacked layout (quant/q8-0-x16.h) into group
// ((nb + 1) / 2 block pairs): the weights decoded to int8 as the SIMD levels decode them (int8_weights), the 16
// x 8 quads transposed as the tokens of kernels/block-step/vnni-pack.h; for a format with a minimum the 16 rows'
// F16 minimums of block b at mins + 16 b; rows past m zero (weights, scales and minimums). Opaque to GCC's
// interprocedural analysis: NOTE(amx-noipa).
// The 64 int8 levels of 64 nibbles (bytes of 0..15) of the nibble formats, as int8_weights decodes a block's 32:
// Q4_0 the nibble minus 8, Q4_1 the nibble, IQ4_NL its level in the non-linear table.
template <typename Block>
__m512i nibble_levels(__m512i n) {
    if constexpr (std::is_same_v<Block, quant::block_q4_0>) return _mm512_sub_epi8(n, _mm512_set1_epi8(8));
    if constexpr (std::is_same_v<Block, quant::block_iq4_nl>)
        return _mm512_shuffle_epi8(_mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i *>(quant::k_iq4nl_values))), n);
    return n;
}
template <typename Block>
constexpr bool k_nibbles = std::is_same_v<Block, quant::block_q4_0> || std::is_same_v<Block, quant::block_q4_1> ||
                           std::is_same_v<Block, quant::block_iq4_nl>;

// The permute indices of nibble_tile's 16 x 4 dword transpose (16 + i: lane i of the second source). Source v[i]
// holds rows 4i .. 4i + 3, a row's 16 qs bytes (4 dwords) per 128-bit quarter. First u[2h + g] (h: rows 8h ..
// 8h + 7, g: dwords 2g, 2g + 1) from v[2h], v[2h + 1], lane 8 (j % 2) + r % 8 = row r's dword j; then dword j of
// every row from u[j / 2] and u[j / 2 + 2], lane r = row r.
struct nibble_indices {
    alignas(64) int32_t u[2][16], out[2][16];
};
constexpr nibble_indices nibble_indices_for() {
    nibble_indices ix{};
    for (int l = 0; l < 16; ++l) {
        const int jj = l / 8, r = l % 8;   // dword 2g + jj of row r (of the 8)
        for (int g = 0; g < 2; ++g) ix.u[g][l] = (r / 4) * 16 + 4 * (r % 4) + 2 * g + jj;
        for (int odd = 0; odd < 2; ++odd) ix.out[odd][l] = (l / 8) * 16 + 8 * odd + l % 8;
    }
    return ix;
}

// The B tile of block b of rows w .. w + m - 1 for a nibble format (rows past m zero): quad row k (elements
// 4k .. 4k + 3 of every row) is dword k % 4 of each row's qs, its low nibbles for k < 4 and its high ones for
// k >= 4 (byte j of qs holds elements j and j + 16) — a 16 x 4 dword transpose of the rows' qs and a nibble
// split, where the generic path decodes every row to 32 bytes and transposes 16 x 8 dwords.
template <typename Block>
void nibble_tile(const char * w, size_t wb, int m, int64_t b, uint8_t * tile) {
    static constexpr nibble_indices ix = nibble_indices_for();
    __m512i v[4];
    for (int i = 0; i < 4; ++i) {
        __m128i row[4];
        for (int q = 0; q < 4; ++q) {
            const int r = 4 * i + q;
            row[q] = r < m ? _mm_loadu_si128(reinterpret_cast<const __m128i *>(reinterpret_cast<const Block *>(w + size_t(r) * wb)[b].qs))
                           : _mm_setzero_si128();
        }
        v[i] = _mm512_inserti32x4(_mm512_inserti32x4(_mm512_inserti32x4(_mm512_castsi128_si512(row[0]), row[1], 1), row[2], 2), row[3], 3);
    }
    __m512i u[4];
    for (int h = 0; h < 2; ++h)
        for (int g = 0; g < 2; ++g)
            u[2 * h + g] = _mm512_permutex2var_epi32(v[2 * h], _mm512_load_si512(ix.u[g]), v[2 * h + 1]);
    const __m512i low4 = _mm512_set1_epi8(0x0f);
    for (int j = 0; j < 4; ++j) {
        const __m512i d = _mm512_permutex2var_epi32(u[j / 2], _mm512_load_si512(ix.out[j % 2]), u[j / 2 + 2]);
        _mm512_store_si512(tile + 64 * j, nibble_levels<Block>(_mm512_and_si512(d, low4)));
        _mm512_store_si512(tile + 64 * (4 + j), nibble_levels<Block>(_mm512_and_si512(_mm512_srli_epi16(d, 4), low4)));
    }
}

template <typename Block>
__attribute__((noipa)) void prepare_group(const char * w, size_t wb, int m, int64_t nb, block_q8_0_x16 * group, uint16_t * mins) {
    for (int64_t b = 0; b < nb; ++b) {
        block_q8_0_x16 & pair = group[b / k_pair];
        const int h = int(b % k_pair);
        if constexpr (k_nibbles<Block>) {
            for (int r = 0; r < k_rows; ++r) {
                const bool in = r < m;
                const Block * blk = in ? reinterpret_cast<const Block *>(w + size_t(r) * wb) + b : nullptr;
                pair.d[h][r] = in ? blk->d : 0;
                if constexpr (k_has_min<Block>) mins[b * k_rows + r] = in ? blk->m : 0;
            }
            nibble_tile<Block>(w, wb, m, b, reinterpret_cast<uint8_t *>(pair.qs[h]));
            continue;
        }
        __m256i q[k_rows];
        for (int r = 0; r < k_rows; ++r) {
            if (r < m) {
                const Block & blk = reinterpret_cast<const Block *>(w + size_t(r) * wb)[b];
                q[r] = int8_weights<Block>::values(blk);
                pair.d[h][r] = blk.d;
                if constexpr (k_has_min<Block>) mins[b * k_rows + r] = blk.m;
            } else {
                q[r] = _mm256_setzero_si256();
                pair.d[h][r] = 0;
                if constexpr (k_has_min<Block>) mins[b * k_rows + r] = 0;
            }
        }
        store_quads(q, reinterpret_cast<uint8_t *>(pair.qs[h]));
    }
}

// The nibble formats repacked at load for the avx512 level's lanes, whose layouts this level takes too
// (quant/q4-1-x16.h; quant/q4-0-x16.h, Q4_0's and IQ4_NL's): where block b of a 16-row group keeps its 4 lines of
// qs (line k: bytes 4k .. 4k + 3 of every row's qs), its 16 F16 scales and, for Q4_1, its 16 F16 minimums.
template <typename Block>
struct x16_source : quant::q4_0_x16_access {};   // Q4_0 and IQ4_NL: two blocks a group entry
template <>
struct x16_source<quant::block_q4_1> : quant::q4_1_x16_access {};

// A 16-row group repacked at load for a nibble format, nb blocks at g, as the tiles read it (group, mins: as
// prepare_group leaves them). Line k's low nibbles are elements 4k .. 4k + 3 of the 16 rows and its high ones 16 +
// 4k .. 16 + 4k + 3, so B tile rows k and 4 + k are its nibbles split — no transpose, where the GGUF rows take
// nibble_tile's. Opaque to GCC's interprocedural analysis: NOTE(amx-noipa).
template <typename Block>
__attribute__((noipa)) void prepare_repacked_group(const char * w, int64_t nb, block_q8_0_x16 * group, uint16_t * mins) {
    using source = x16_source<Block>;
    const auto * g = reinterpret_cast<const typename source::group *>(w);
    const __m512i low4 = _mm512_set1_epi8(0x0f);
    for (int64_t b = 0; b < nb; ++b) {
        block_q8_0_x16 & pair = group[b / k_pair];
        const int h = int(b % k_pair);
        std::memcpy(pair.d[h], source::d(g, b), sizeof pair.d[h]);
        if constexpr (k_has_min<Block>) std::memcpy(mins + b * k_rows, source::m(g, b), k_rows * sizeof(uint16_t));
        auto * tile = reinterpret_cast<uint8_t *>(pair.qs[h]);
        for (int k = 0; k < 4; ++k) {
            const __m512i q = _mm512_loadu_si512(source::line(g, b, k));
            _mm512_store_si512(tile + 64 * k, nibble_levels<Block>(_mm512_and_si512(q, low4)));
            _mm512_store_si512(tile + 64 * (4 + k), nibble_levels<Block>(_mm512_and_si512(_mm512_srli_epi16(q, 4), low4)));
        }
    }
}

// NOTE(amx-prefetch): the tiles wait on the weights whenever a row group is not reused across many token groups
// — decode, and the 16-token steps of 16 streams — and one sequential stream per core did not keep enough reads
// in flight. So every product also asks for the same block of the next group of 16 rows (whose copy follows
// this group's in the repacked layout) into L2 — a second stream the prefetchers then follow — and for the
// block 8 blocks ahead into L1. Measured through Engine on the Xeon (2 threads, the synthetic Q8_0 model,
// interleaved runs): decode 20.2 tok/s without, 20.8 with the near one alone, 22.0 with the next group's
// alone, 23.2 with both (a third stream, the group after, 21.2; the next group's into L1, 20.8); 16 streams
// 163 → 212 tok/s; the 512-token prompt 325 → 346. Prefetches never fault: past the weights (a task's last
// group, a converted group's buffer) they only cost a read.
constexpr size_t k_prefetch_near = 4 * sizeof(block_q8_0_x16);

// Block b's cache lines from p (its weights; with the pair's scales for the pair's first block) at hint Hint.
template <int Hint>
inline void prefetch_block(const char * p, int64_t b) {
    for (int l = 0; l < k_quads; ++l) _mm_prefetch(p + 64 * l, static_cast<_mm_hint>(Hint));
    if (b % k_pair == 0) _mm_prefetch(p + k_pair * sizeof(block_q8_0_x16::qs[0]), static_cast<_mm_hint>(Hint));
}

// Block B's dots of the n packed tokens and the group's 16 rows into the zeroed C tile TC, through A tile TA and
// B tile TB; and the prefetches of NOTE(amx-prefetch).
#define TM_AMX_PRODUCT(B, TA, TB, TC)                                                                  \
    do {                                                                                               \
        const char * wb = reinterpret_cast<const char *>(group[(B) / k_pair].qs[(B) % k_pair]);       \
        TM_TILE_LOADD(TA, pack + size_t(B) * act_block, quant::qk8_0);                               \
        TM_TILE_LOADD(TB, wb, 4 * k_rows);                                                             \
        prefetch_block<_MM_HINT_T1>(wb + next_group, (B));                                             \
        prefetch_block<_MM_HINT_T0>(wb + k_prefetch_near, (B));                                        \
        TM_TILE_ZERO(TC);                                                                              \
        TM_TILE_DPBSSD(TC, TA, TB);                                                                    \
    } while (0)

// Block B's dots (stored in dots[D]) folded into the N tokens' accumulators, 16 rows a zmm: the step of
// kernels/block-step/step.h lane by lane, acc = fma(d_w * d_x (rounded), float(dot), acc), and with Min
// block_step_min's acc = fma(m_w, s_x, acc). Lanes of rows past m compute with scale 0 (their weights, scales
// and minimums are zero) and are never stored.
#define TM_AMX_FOLD(B, D)                                                                                        \
    do {                                                                                                         \
        const __m512 dw = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(group[(B) / k_pair].d[(B) % k_pair]))); \
        const float * dx = reinterpret_cast<const float *>(pack + size_t(B) * act_block + k_act_quads);        \
        __m512 mw = _mm512_setzero_ps();                                                                         \
        if constexpr (Min) mw = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(mins + size_t(B) * k_rows))); \
        _Pragma("GCC unroll 16") for (int t = 0; t < N; ++t) {                                                   \
            const __m512 scale = _mm512_mul_ps(dw, _mm512_set1_ps(dx[t]));                                       \
            acc[t] = _mm512_fmadd_ps(scale, _mm512_cvtepi32_ps(_mm512_load_si512(dots[D][t])), acc[t]);          \
            if constexpr (Min) acc[t] = _mm512_fmadd_ps(mw, _mm512_set1_ps(dx[k_tok + t]), acc[t]);              \
        }                                                                                                        \
    } while (0)

// Iteration b of row_group's pipeline, b % 4 = I: block b + 3's product into C tile 4 + (b + 3) % 4, block
// b + 2's C tile stored into dots[(b + 2) % 4], block b's dots (stored two iterations earlier) folded.
#define TM_AMX_STEP(I, TA, TB, TC_NEXT, TC_STORE)                                     \
    do {                                                                              \
        const int64_t bi = b + (I);                                                   \
        if (bi >= nb) break;                                                          \
        if (bi + 3 < nb) TM_AMX_PRODUCT(bi + 3, TA, TB, TC_NEXT);                     \
        if (bi + 2 < nb) TM_TILE_STORED(TC_STORE, dots[((I) + 2) % 4], 4 * k_rows);   \
        TM_AMX_FOLD(bi, (I));                                                         \
    } while (0)

// GCC 12 reports the deliberately undefined pass-through operand of its own _mm512_cvtepi32_ps (all lanes
// written, mask all ones) as maybe uninitialized once inlined here.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

// One group of 16 weight rows (group: its block pairs, nb blocks; with Min, mins: their minimums as
// prepare_group leaves them) x the N packed tokens of pack, every block: y[t * ldy + r] for the first m rows.
// Tiles configured by the caller for N tokens. The tile unit works ahead
// of the fold: while block b is folded, block b + 2's C tile is being stored and block b + 3's product
// computed (four C tiles in rotation), so the fold never waits on a product or its store.
template <int N, bool Min>
void row_group(const block_q8_0_x16 * group, const uint16_t * mins, int64_t nb, const uint8_t * pack, float * y, int64_t ldy,
               int m) {
    constexpr size_t act_block = k_act_block<Min>;
    __m512 acc[N];
#pragma GCC unroll 16
    for (int t = 0; t < N; ++t) acc[t] = _mm512_setzero_ps();
    alignas(64) int32_t dots[4][N][k_rows];
    const size_t next_group = size_t(nb + 1) / k_pair * sizeof(block_q8_0_x16);
    TM_AMX_PRODUCT(0, 0, 2, 4);
    if (nb > 1) TM_AMX_PRODUCT(1, 1, 3, 5);
    if (nb > 2) TM_AMX_PRODUCT(2, 0, 2, 6);
    TM_TILE_STORED(4, dots[0], 4 * k_rows);
    if (nb > 1) TM_TILE_STORED(5, dots[1], 4 * k_rows);
    for (int64_t b = 0; b < nb; b += 4) {
        TM_AMX_STEP(0, 1, 3, 7, 6);
        TM_AMX_STEP(1, 0, 2, 4, 7);
        TM_AMX_STEP(2, 1, 3, 5, 4);
        TM_AMX_STEP(3, 0, 2, 6, 5);
    }
    const __mmask16 rows = __mmask16((1u << m) - 1);
#pragma GCC unroll 16
    for (int t = 0; t < N; ++t) _mm512_mask_storeu_ps(y + t * ldy, rows, acc[t]);
}

#pragma GCC diagnostic pop

#undef TM_AMX_STEP
#undef TM_AMX_FOLD
#undef TM_AMX_PRODUCT

// Rows r0..r1 x every token (kernels/amx/passes.h amx_rows). Block is the weights' block type, or block_q8_0_x16
// for Q8_0 repacked at load (read in place; r0 and r1 - r0 multiples of 16); the other formats are converted to
// that layout per pass and group — from the GGUF rows, or with Repacked from their own 16-row layout (Q4_1, Q4_0,
// IQ4_NL: prepare_repacked_group) — and batches of fewer than k_amx_min_tokens tokens take the AVX-512 kernel of
// the same numerics and layout (Simd) instead, as the conversion would cost them more than the tiles save.
template <typename Block, matmul_rows_kernel * Simd, matmul_rows_kernel * Reference, bool Repacked = false>
void rows(const void * w, size_t wb, const void * x, size_t xb, int64_t n_tok, int64_t n_in, int64_t r0, int64_t r1, float * y,
          int64_t ldy) {
    constexpr bool in_place = std::is_same_v<Block, block_q8_0_x16>;
    constexpr bool min = k_has_min<Block>;
    const int64_t nb = n_in / quant::qk8_0;
    // A converted group: its block pairs, then (with a minimum) its minimums, 16 per block.
    const size_t pairs_bytes = size_t(nb + 1) / k_pair * sizeof(block_q8_0_x16);
    const size_t group_bytes = in_place ? 0 : pairs_bytes + (min ? size_t(nb) * k_rows * sizeof(uint16_t) : 0);
    const amx_call call{in_place ? nullptr : Simd, Reference, size_t(nb) * k_act_block<min>, group_bytes, k_tile_block_bytes,
                        tile_layout::tokens_a};
    const block_q8_0_x16 * group = nullptr;   // the current row group's weights, as the tiles read them
    const uint16_t * mins = nullptr;          // and their minimums (Q4_1, Q5_1)
    amx_rows(
        call, w, wb, x, xb, n_tok, n_in, r0, r1, y, ldy,
        [&](const char * xt, int n, uint8_t * dst) { pack_activations<activation_of<Block>>(xt, xb, n, nb, dst); },
        [&](const char * wg, int m, uint8_t * scratch) {
            if constexpr (in_place) {
                group = reinterpret_cast<const block_q8_0_x16 *>(wg);
            } else {
                auto * converted = reinterpret_cast<block_q8_0_x16 *>(scratch);
                uint16_t * converted_mins = min ? reinterpret_cast<uint16_t *>(scratch + pairs_bytes) : nullptr;
                if constexpr (Repacked)
                    prepare_repacked_group<Block>(wg, nb, converted, converted_mins);
                else
                    prepare_group<Block>(wg, wb, m, nb, converted, converted_mins);
                group = converted;
                mins = converted_mins;
            }
        },
        [&](int n, const uint8_t * packed, float * yg, int m) {
            with_token_count(n, [&](auto count) { row_group<decltype(count)::value, min>(group, mins, nb, packed, yg, ldy, m); });
        });
}

} // namespace

TM_MATMUL_ROWS_ENTRY(matmul_q8_0, rows<quant::block_q8_0, TM_AMX_SIMD_LEVEL::matmul_q8_0, block_step_ref::matmul_q8_0>)
TM_MATMUL_ROWS_ENTRY(matmul_q4_0, rows<quant::block_q4_0, TM_AMX_SIMD_LEVEL::matmul_q4_0, block_step_ref::matmul_q4_0>)
TM_MATMUL_ROWS_ENTRY(matmul_iq4_nl, rows<quant::block_iq4_nl, TM_AMX_SIMD_LEVEL::matmul_iq4_nl, block_step_ref::matmul_iq4_nl>)
TM_MATMUL_ROWS_ENTRY(matmul_q4_1, rows<quant::block_q4_1, TM_AMX_SIMD_LEVEL::matmul_q4_1, block_step_ref::matmul_q4_1>)
TM_MATMUL_ROWS_ENTRY(matmul_q5_1, rows<quant::block_q5_1, TM_AMX_SIMD_LEVEL::matmul_q5_1, block_step_ref::matmul_q5_1>)
TM_MATMUL_ROWS_ENTRY(matmul_q8_0_x16, rows<block_q8_0_x16, nullptr, block_step_ref::matmul_q8_0_x16>)
TM_MATMUL_ROWS_ENTRY(matmul_q4_1_x16, rows<quant::block_q4_1, TM_AMX_SIMD_LEVEL::matmul_q4_1_x16, block_step_ref::matmul_q4_1_x16, true>)
TM_MATMUL_ROWS_ENTRY(matmul_q4_0_x16, rows<quant::block_q4_0, TM_AMX_SIMD_LEVEL::matmul_q4_0_x16, block_step_ref::matmul_q4_0_x16, true>)
TM_MATMUL_ROWS_ENTRY(matmul_iq4_nl_x16, rows<quant::block_iq4_nl, TM_AMX_SIMD_LEVEL::matmul_iq4_nl_x16, block_step_ref::matmul_iq4_nl_x16, true>)

} // namespace tmill::kernels::TM_AMX_LEVEL
