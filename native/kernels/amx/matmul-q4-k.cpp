// AMX int8 matmul rows for Q4_K weights repacked at load (quant/q4-k-x16.h) against Q8_K activations, batches
// of k_amx_min_tokens tokens or more (docs/kernels.md, "The AMX path"); fewer take the avx512 level's kernel for
// the layout. Compiled as the two AMX levels (kernels/amx/level.h).
//
// NOTE(amx-q4-k): the numerics are the reference's (kernels/ref/matmul-k.cpp, dot_q4_k_of), which the avx512
// kernel computes too: per (row, token) and super-block, isum = sum_j sc_j * dot_j over the 8 sub-blocks (dot_j
// the exact int32 dot of the sub-block's 32 unsigned nibbles q with its 32 activations) and msum = sum_j m_j *
// xsum_j, exact in int32; then acc = fma(isum, d_w * d_x, acc) and macc = fma(msum, dmin_w * d_x, macc) in
// super-block order, and acc - macc. The tiles compute isum whole: each weight times its sub-block's scale,
// sc * q <= 63 * 15 = 945, is split as 16 * hi + lo (hi <= 59, lo <= 15: both int8), so isum = 16 * (hi . x) +
// (lo . x) — two C tiles accumulated over the super-block's 4 pairs of sub-blocks (K = 64 bytes a product:
// A = the tokens' 64 activations of a pair, B = the 16 rows' hi or lo values in VNNI order), exact in int32
// (|hi . x| <= 256 * 59 * 128). The groups' hi and lo tiles are made once per pass (a pass's token groups reuse
// them); per super-block the two C tiles are stored and folded with AVX-512, isum = (hi << 4) + lo and the
// float steps above; macc is the same chain as the avx512 kernel's, computed before the tiles (it needs no
// product). Every token count and row range of whole groups takes the same products, so a row's result never
// depends on its batch or range.
#include "kernels/amx/level.h"

#include "kernels/amx/amx.h"
#include "kernels/amx/passes.h"
#include "kernels/amx/split-tiles.h"
#include "kernels/amx/tile-ops.h"
#include "kernels/amx/tile-session.h"
#include "kernels/block-step/vnni-pack.h"
#include "quant/q4-k-x16.h"
#include "quant/q8-k.h"

#include <cstddef>
#include <cstdint>
#include <cstring>

// One FMA per step, as written (see kernels/amx/matmul-q8-0.cpp).
#pragma GCC optimize("fp-contract=off")

namespace tmill::kernels::TM_AMX_LEVEL {

namespace {

using namespace avx512_vnni;
using quant::block_q4_k_x16;
using quant::block_q8_k;

constexpr int k_tok = int(k_amx_tile_tokens);
constexpr int k_rows = quant::k_x16_rows;
constexpr int k_pairs = k_split_pairs;
constexpr int k_pair_bytes = k_split_pair_bytes;
constexpr size_t k_tile_bytes = k_split_tile_bytes;
static_assert(k_rows == k_split_rows && k_tok == k_rows && k_pairs * 64 == quant::qk_k,
              "a B tile is one pair of sub-blocks of a 16-row group");

// The activations of a group of 16 tokens as the A tiles read them, per super-block: the 4 pairs' tiles (token
// t's 64 bytes at row t), then the tokens' msum words (xs[i][t] = xsum_2i | xsum_2i+1 << 16, the pairs
// vpdpwssd takes) and their F32 scales. A multiple of 64 bytes, every tile 64-byte aligned.
constexpr size_t k_act_xs = size_t(k_pairs) * k_tile_bytes;                    // 4096
constexpr size_t k_act_d = k_act_xs + sizeof(int32_t) * k_pairs * k_tok;       // + 256
constexpr size_t k_act_block = k_act_d + sizeof(float) * k_tok;                // + 64
static_assert(k_act_block % 64 == 0, "every super-block's tiles start on a cache line");

// Tokens x .. x + n - 1 (row stride xb), nb super-blocks each, into pack (nb * k_act_block bytes); rows and
// values past n are never read. Opaque to GCC's interprocedural analysis: NOTE(amx-noipa) in matmul-q8-0.cpp.
__attribute__((noipa)) void pack_activations(const char * x, size_t xb, int n, int64_t nb, uint8_t * pack) {
    for (int64_t b = 0; b < nb; ++b) {
        uint8_t * dst = pack + size_t(b) * k_act_block;
        int32_t * xs = reinterpret_cast<int32_t *>(dst + k_act_xs);
        float * dx = reinterpret_cast<float *>(dst + k_act_d);
        for (int t = 0; t < n; ++t) {
            const block_q8_k & blk = reinterpret_cast<const block_q8_k *>(x + size_t(t) * xb)[b];
            for (int c = 0; c < k_pairs; ++c)
                _mm512_store_si512(dst + size_t(c) * k_tile_bytes + size_t(t) * k_pair_bytes, _mm512_loadu_si512(blk.qs + k_pair_bytes * c));
            const int16_t * bs = blk.bsums;
            for (int i = 0; i < k_pairs; ++i)
                xs[i * k_tok + t] = int32_t(uint32_t(uint16_t(bs[4 * i] + bs[4 * i + 1])) | uint32_t(uint16_t(bs[4 * i + 2] + bs[4 * i + 3])) << 16);
            dx[t] = blk.d;
        }
    }
}

// The 16 rows' bytes p[0..15] as int32 lanes.
inline __m512i row_bytes(const uint8_t * p) { return _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i *>(p))); }

// 16 * hi + lo = q * s for bytes q <= 15 and s <= 63, byte by byte (in 16-bit lanes, even and odd bytes apart).
inline void split_products(__m512i q, __m512i s, __m512i & hi, __m512i & lo) {
    const __m512i even = _mm512_set1_epi16(0x00ff), low4 = _mm512_set1_epi16(0x000f);
    const __m512i p_even = _mm512_mullo_epi16(_mm512_and_si512(q, even), _mm512_and_si512(s, even));
    const __m512i p_odd = _mm512_mullo_epi16(_mm512_srli_epi16(q, 8), _mm512_srli_epi16(s, 8));
    hi = _mm512_or_si512(_mm512_srli_epi16(p_even, 4), _mm512_slli_epi16(_mm512_srli_epi16(p_odd, 4), 8));
    lo = _mm512_or_si512(_mm512_and_si512(p_even, low4), _mm512_slli_epi16(_mm512_and_si512(p_odd, low4), 8));
}

// A group's weights as hi and lo B tiles (nb * k_split_weight_block bytes). Pair c of a super-block is the layout's
// chunk c: quads 8c + k, already in VNNI order (a row per int32 lane), hold in their low nibbles sub-block 2c
// (the tile's quad rows 0..7) and in their high nibbles sub-block 2c + 1 (rows 8..15); each row's byte takes its
// sub-block's scale (a row's scale in the 4 bytes of its lane). Opaque to GCC's interprocedural analysis:
// NOTE(amx-noipa) in matmul-q8-0.cpp.
__attribute__((noipa)) void expand_group(const block_q4_k_x16 * g, int64_t nb, uint8_t * tiles) {
    const __m512i low4 = _mm512_set1_epi8(0x0f), spread = _mm512_set1_epi32(0x01010101);
    for (int64_t b = 0; b < nb; ++b)
        for (int c = 0; c < k_pairs; ++c) {
            uint8_t * hi_tile = tiles + size_t(b) * k_split_weight_block + size_t(2 * c) * k_tile_bytes;
            uint8_t * lo_tile = hi_tile + k_tile_bytes;
            const __m512i sc_lo = _mm512_mullo_epi32(row_bytes(g[b].sc[2 * c]), spread);
            const __m512i sc_hi = _mm512_mullo_epi32(row_bytes(g[b].sc[2 * c + 1]), spread);
            for (int k = 0; k < 8; ++k) {
                const __m512i q = _mm512_loadu_si512(g[b].qs[8 * c + k]);
                __m512i hi, lo;
                split_products(_mm512_and_si512(q, low4), sc_lo, hi, lo);
                _mm512_store_si512(hi_tile + 64 * k, hi);
                _mm512_store_si512(lo_tile + 64 * k, lo);
                split_products(_mm512_and_si512(_mm512_srli_epi16(q, 4), low4), sc_hi, hi, lo);
                _mm512_store_si512(hi_tile + 64 * (8 + k), hi);
                _mm512_store_si512(lo_tile + 64 * (8 + k), lo);
            }
        }
}

// GCC 12 reports the deliberately undefined pass-through operand of its own _mm512_cvtepi32_ps as maybe
// uninitialized once inlined (as in matmul-q8-0.cpp).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

// One group of 16 rows (g: its super-blocks, tiles: their hi and lo B tiles) x the N packed tokens of pack:
// y[t * ldy + r]. Tiles configured by the caller for N tokens and K = 64. The mins' chain first (no tiles), then
// the products (split_super_blocks), each super-block's sums folded as isum = (hi << 4) + lo.
template <int N>
void row_group(const block_q4_k_x16 * g, const uint8_t * tiles, int64_t nb, const uint8_t * pack, float * y, int64_t ldy) {
    alignas(64) float mins[N][k_rows];
    {
        __m512 macc[N];
#pragma GCC unroll 16
        for (int t = 0; t < N; ++t) macc[t] = _mm512_setzero_ps();
        for (int64_t b = 0; b < nb; ++b) {
            __m512i pairs[k_pairs];
            for (int i = 0; i < k_pairs; ++i)
                pairs[i] = _mm512_or_si512(row_bytes(g[b].m[2 * i]), _mm512_slli_epi32(row_bytes(g[b].m[2 * i + 1]), 16));
            const __m512 dmin = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(g[b].dmin)));
            const int32_t * xs = reinterpret_cast<const int32_t *>(pack + size_t(b) * k_act_block + k_act_xs);
            const float * dx = reinterpret_cast<const float *>(pack + size_t(b) * k_act_block + k_act_d);
#pragma GCC unroll 16
            for (int t = 0; t < N; ++t) {
                __m512i msum = _mm512_setzero_si512();
                for (int i = 0; i < k_pairs; ++i) msum = _mm512_dpwssd_epi32(msum, pairs[i], _mm512_set1_epi32(xs[i * k_tok + t]));
                macc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(msum), _mm512_mul_ps(dmin, _mm512_set1_ps(dx[t])), macc[t]);
            }
        }
#pragma GCC unroll 16
        for (int t = 0; t < N; ++t) _mm512_store_ps(mins[t], macc[t]);
    }
    __m512 acc[N];
#pragma GCC unroll 16
    for (int t = 0; t < N; ++t) acc[t] = _mm512_setzero_ps();
    split_super_blocks<tile_layout::tokens_a, N>(tiles, pack, k_act_block, nb, [&](int64_t b, const int32_t (*hi)[k_rows], const int32_t (*lo)[k_rows]) __attribute__((always_inline)) {
        const __m512 dw = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(g[b].d)));
        const float * dx = reinterpret_cast<const float *>(pack + size_t(b) * k_act_block + k_act_d);
#pragma GCC unroll 16
        for (int t = 0; t < N; ++t) {
            const __m512i isum = _mm512_add_epi32(_mm512_slli_epi32(_mm512_load_si512(hi[t]), 4), _mm512_load_si512(lo[t]));
            acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), _mm512_mul_ps(dw, _mm512_set1_ps(dx[t])), acc[t]);
        }
    });
#pragma GCC unroll 16
    for (int t = 0; t < N; ++t) _mm512_storeu_ps(y + t * ldy, _mm512_sub_ps(acc[t], _mm512_load_ps(mins[t])));
}

#pragma GCC diagnostic pop

} // namespace

// Rows r0..r1 (multiples of 16) x every token (kernels/amx/passes.h amx_rows): a row group's tiles made once per
// pass; fewer than k_amx_min_tokens tokens take the avx512 kernel (the same bits).
void matmul_q4_k_x16(const void * w, size_t wb, const void * x, size_t xb, int64_t n_tok, int64_t n_in, int64_t r0,
                     int64_t r1, float * y, int64_t ldy) {
    const int64_t nb = n_in / quant::qk_k;
    const amx_call call{TM_AMX_SIMD_LEVEL::matmul_q4_k_x16, ref::matmul_q4_k_x16, size_t(nb) * k_act_block,
                        size_t(nb) * k_split_weight_block, k_pair_bytes, tile_layout::tokens_a};
    const block_q4_k_x16 * g = nullptr;
    const uint8_t * tiles = nullptr;
    amx_rows(
        call, w, wb, x, xb, n_tok, n_in, r0, r1, y, ldy,
        [&](const char * xt, int n, uint8_t * dst) { pack_activations(xt, xb, n, nb, dst); },
        [&](const char * wg, int, uint8_t * scratch) {
            g = reinterpret_cast<const block_q4_k_x16 *>(wg);
            expand_group(g, nb, scratch);
            tiles = scratch;
        },
        [&](int n, const uint8_t * packed, float * yg, int) {
            with_token_count(n, [&](auto count) { row_group<decltype(count)::value>(g, tiles, nb, packed, yg, ldy); });
        });
}

} // namespace tmill::kernels::TM_AMX_LEVEL
