// AMX int8 matmul rows for Q6_K weights (the GGUF rows) against Q8_K activations, batches of k_amx_min_tokens
// tokens or more (docs/kernels.md, "The AMX path"); fewer take the avx512 level's kernel of the same numerics.
// Compiled as the two AMX levels (kernels/amx/level.h).
//
// NOTE(amx-q6-k): the numerics are the block step of kernels/block-step/step.h (block_step_k, the avx512 level's
// for Q6_K, NOTE(q6-k-block-step)): per (row, token) and super-block isum = sum_e sc[e / 16] * (q_e - 32) * x_e,
// exact in int32, then acc = fma(float(isum), d_x * d_w, acc) in super-block order. The tiles compute isum whole:
// each weight times its sub-block's scale, v = sc * (q - 32) in [-4064, 4096], is split as 64 * hi + lo (hi =
// v >> 6 in [-64, 64], lo = v & 63: both int8), so isum = 64 * (hi . x) + (lo . x), two C tiles over the
// super-block's 4 pairs of 32-element sub-blocks (kernels/amx/split-tiles.h). Unlike Q4_K's repacked rows, the
// GGUF rows are decoded per pass and row group, so the weights are the A operand (a tile row = a weight row's 64
// values of a pair, as decoded: no transpose) and the tokens the B operand, put in VNNI order once per pass
// (shared by every row group); C holds a weight row's n sums per row, and the fold costs one FMA per weight row
// and super-block, the 16 rows' results transposed to the tokens' rows at the end. Every token count and row range
// takes the same products, so a row's result never depends on its batch or range.
#include "kernels/amx/level.h"

#include "kernels/amx/amx.h"
#include "kernels/amx/passes.h"
#include "kernels/amx/split-tiles.h"
#include "kernels/amx/tile-ops.h"
#include "kernels/amx/tile-session.h"
#include "kernels/block-step/reference.h"
#include "kernels/block-step/vnni-pack.h"
#include "kernels/simd/avx512-q6-k-levels.h"
#include "quant/q6-k.h"
#include "quant/q8-k.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>

// One FMA per step, as written (see kernels/amx/matmul-q8-0.cpp).
#pragma GCC optimize("fp-contract=off")

namespace tmill::kernels::TM_AMX_LEVEL {

namespace {

using namespace avx512_vnni;
using quant::block_q6_k;
using quant::block_q8_k;

constexpr int k_tok = int(k_amx_tile_tokens);
constexpr int k_rows = k_split_rows;
static_assert(k_tok == 16 && k_rows == 16 && k_split_pairs * 64 == quant::qk_k, "a pair tile is 16 x 64 bytes");

// The activations of a group of 16 tokens as the B tiles read them, per super-block: the 4 pairs' tiles (16 rows
// of 64 bytes, row k holding bytes 4k..4k+3 of the pair for every token: VNNI order), then the tokens' F32 scales.
constexpr size_t k_act_d = size_t(k_split_pairs) * k_split_tile_bytes;   // 4096
constexpr size_t k_act_block = k_act_d + sizeof(float) * k_tok;         // + 64
// A decoded group: per super-block its hi and lo A tiles (split-tiles.h, k_split_weight_block bytes), then per
// super-block the 16 rows' F32 scales d_w.
constexpr size_t k_group_scales = sizeof(float) * k_rows;   // 64

// Tokens x .. x + n - 1 (row stride xb), nb super-blocks each, into pack (nb * k_act_block bytes); the lanes of
// tokens past n are zero. Opaque to GCC's interprocedural analysis: NOTE(amx-noipa) in matmul-q8-0.cpp.
__attribute__((noipa)) void pack_activations(const char * x, size_t xb, int n, int64_t nb, uint8_t * pack) {
    for (int64_t b = 0; b < nb; ++b) {
        uint8_t * dst = pack + size_t(b) * k_act_block;
        float * dx = reinterpret_cast<float *>(dst + k_act_d);
        for (int half = 0; half < 2 * k_split_pairs; ++half) {   // 32 bytes of every token: 8 rows of a pair's tile
            __m256i q[k_tok];
            for (int t = 0; t < k_tok; ++t)
                q[t] = t < n ? _mm256_loadu_si256(reinterpret_cast<const __m256i *>(
                                   reinterpret_cast<const block_q8_k *>(x + size_t(t) * xb)[b].qs + 32 * half))
                             : _mm256_setzero_si256();
            store_quads(q, dst + size_t(half) * k_split_tile_bytes / 2);
        }
        for (int t = 0; t < k_tok; ++t) dx[t] = t < n ? reinterpret_cast<const block_q8_k *>(x + size_t(t) * xb)[b].d : 0.0f;
    }
}

// 64 bytes q (unsigned 6-bit levels) times the scales of their 4 sub-blocks (scale words sc, one per 16
// elements' words), minus the offset: v = sc * (q - 32), split as 64 * hi + lo, the bytes of hi and lo in order.
inline void split_levels(__m512i q, __m512i sc_lo, __m512i sc_hi, __m512i & hi, __m512i & lo) {
    const __m512i off = _mm512_set1_epi16(32), low6 = _mm512_set1_epi16(63);
    const __m512i v0 = _mm512_mullo_epi16(_mm512_sub_epi16(_mm512_cvtepu8_epi16(_mm512_castsi512_si256(q)), off), sc_lo);
    const __m512i v1 = _mm512_mullo_epi16(_mm512_sub_epi16(_mm512_cvtepu8_epi16(_mm512_extracti64x4_epi64(q, 1)), off), sc_hi);
    hi = _mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvtepi16_epi8(_mm512_srai_epi16(v0, 6))), _mm512_cvtepi16_epi8(_mm512_srai_epi16(v1, 6)), 1);
    lo = _mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvtepi16_epi8(_mm512_and_si512(v0, low6))),
                            _mm512_cvtepi16_epi8(_mm512_and_si512(v1, low6)), 1);
}

// Rows w .. w + m - 1 (stride wb), nb super-blocks each, decoded into group (nb * (k_split_weight_block +
// k_group_scales) bytes): per super-block and pair, the hi and lo A tiles (row r: row r's 64 values of the pair),
// then the rows' scales; rows past m zero. The levels as the avx512 level decodes them (q6_k_levels). Opaque to
// GCC's interprocedural analysis: NOTE(amx-noipa) in matmul-q8-0.cpp.
__attribute__((noipa)) void decode_group(const char * w, size_t wb, int m, int64_t nb, uint8_t * group) {
    // Words 0..15: 0, words 16..31: 1 — plus 2 s, the indices of sub-blocks 2 s and 2 s + 1 (elements 32 s .. 32 s + 31).
    const __m512i half_index = _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_set1_epi16(1), 1);
    for (int64_t b = 0; b < nb; ++b) {
        uint8_t * tiles = group + size_t(b) * k_split_weight_block;
        float * dw = reinterpret_cast<float *>(group + size_t(nb) * k_split_weight_block + size_t(b) * k_group_scales);
        for (int r = 0; r < k_rows; ++r) {
            if (r >= m) {
                for (int c = 0; c < 2 * k_split_pairs; ++c)
                    _mm512_store_si512(tiles + size_t(c) * k_split_tile_bytes + 64 * r, _mm512_setzero_si512());
                dw[r] = 0.0f;
                continue;
            }
            const block_q6_k & blk = reinterpret_cast<const block_q6_k *>(w + size_t(r) * wb)[b];
            const __m512i scw = _mm512_castsi256_si512(_mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i *>(blk.scales))));
            // Word i: the scale of element 32 s + i.
            const auto scales_of = [&](int s) { return _mm512_permutexvar_epi16(_mm512_add_epi16(half_index, _mm512_set1_epi16(short(2 * s))), scw); };
            for (int h = 0; h < 2; ++h) {
                __m512i q[2];   // elements 128h .. 128h + 63, then 128h + 64 .. 128h + 127
                q6_k_levels(blk, h, q[0], q[1]);
                for (int part = 0; part < 2; ++part) {   // pair c = 2 h + part: elements 64 c .. 64 c + 63
                    const int c = 2 * h + part;
                    __m512i hi, lo;
                    split_levels(q[part], scales_of(2 * c), scales_of(2 * c + 1), hi, lo);
                    _mm512_store_si512(tiles + size_t(2 * c) * k_split_tile_bytes + 64 * r, hi);
                    _mm512_store_si512(tiles + size_t(2 * c + 1) * k_split_tile_bytes + 64 * r, lo);
                }
            }
            dw[r] = _cvtsh_ss(blk.d);
        }
    }
}

// GCC 12 reports the deliberately undefined pass-through operand of its own _mm512_cvtepi32_ps as maybe
// uninitialized once inlined (as in matmul-q8-0.cpp).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

// One group of 16 rows (group: decoded by decode_group) x the N packed tokens of pack: y[t * ldy + r] for the
// first m rows. Tiles configured by the caller for N tokens, K = 64 and the weights_a layout. Per super-block the
// fold, a zmm of the N tokens per row: acc_r = fma(float((hi << 6) + lo), d_x * d_w, acc_r); at the end the 16
// rows' accumulators transposed, a zmm of 16 rows per token.
template <int N>
void row_group(const uint8_t * group, int64_t nb, const uint8_t * pack, float * y, int64_t ldy, int m) {
    __m512 acc[k_rows];
#pragma GCC unroll 16
    for (int r = 0; r < k_rows; ++r) acc[r] = _mm512_setzero_ps();
    split_super_blocks<tile_layout::weights_a, N>(group, pack, k_act_block, nb,
                                                  [&](int64_t b, const int32_t (*hi)[k_tok], const int32_t (*lo)[k_tok]) __attribute__((always_inline)) {
        const float * dw = reinterpret_cast<const float *>(group + size_t(nb) * k_split_weight_block + size_t(b) * k_group_scales);
        const __m512 dx = _mm512_load_ps(reinterpret_cast<const float *>(pack + size_t(b) * k_act_block + k_act_d));
#pragma GCC unroll 16
        for (int r = 0; r < k_rows; ++r) {
            const __m512i isum = _mm512_add_epi32(_mm512_slli_epi32(_mm512_load_si512(hi[r]), 6), _mm512_load_si512(lo[r]));
            acc[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), _mm512_mul_ps(dx, _mm512_set1_ps(dw[r])), acc[r]);
        }
    });
    __m512i v[k_rows];
#pragma GCC unroll 16
    for (int r = 0; r < k_rows; ++r) v[r] = _mm512_castps_si512(acc[r]);
    transpose_stage<0, 16>(v);
    transpose_stage<1, 16>(v);
    transpose_stage<2, 16>(v);
    transpose_stage<3, 16>(v);
    const __mmask16 rows = __mmask16((1u << m) - 1);
    for (int t = 0; t < N; ++t) _mm512_mask_storeu_ps(y + t * ldy, rows, _mm512_castsi512_ps(v[t]));
}

#pragma GCC diagnostic pop

} // namespace

// Rows r0..r1 x every token (kernels/amx/passes.h amx_rows): a row group decoded once per pass; fewer than
// k_amx_min_tokens tokens take the avx512 kernel (the same bits).
void matmul_q6_k(const void * w, size_t wb, const void * x, size_t xb, int64_t n_tok, int64_t n_in, int64_t r0,
                 int64_t r1, float * y, int64_t ldy) {
    const int64_t nb = n_in / quant::qk_k;
    const amx_call call{TM_AMX_SIMD_LEVEL::matmul_q6_k, block_step_ref::matmul_q6_k, size_t(nb) * k_act_block,
                        size_t(nb) * (k_split_weight_block + k_group_scales), k_split_pair_bytes, tile_layout::weights_a};
    const uint8_t * group = nullptr;
    amx_rows(
        call, w, wb, x, xb, n_tok, n_in, r0, r1, y, ldy,
        [&](const char * xt, int n, uint8_t * dst) { pack_activations(xt, xb, n, nb, dst); },
        [&](const char * wg, int m, uint8_t * scratch) {
            decode_group(wg, wb, m, nb, scratch);
            group = scratch;
        },
        [&](int n, const uint8_t * packed, float * yg, int m) {
            with_token_count(n, [&](auto count) { row_group<decltype(count)::value>(group, nb, packed, yg, ldy, m); });
        });
}

} // namespace tmill::kernels::TM_AMX_LEVEL
