// The avx512 level's Q4_1 and Q5_1 matmuls for prompts and batches: 16 tokens in the lanes of a zmm (8 in a ymm
// for a group of at most 8), through the prompt driver of avx512-token-lanes.h, with the numerics of
// matmul-q32.cpp's tiles unchanged (NOTE(q8-matmul), NOTE(q32-matmul): ggml's x86 arithmetic) — the same bits
// whatever the token count. Included by avx512-int-dots.h only (AVX-512 + VNNI), internal linkage as tiling.h.
//
// NOTE(q32-min-lanes): why and how. Per (row, token) and block the tiles form 8 exact int32 lane sums (lane j:
// the 4 products of elements 4j .. 4j + 3), add (d_w * d_x) * float(lane) to an 8-lane float accumulator and
// m_w * s_x (product rounded, then added) to a float offset; at the end hsum8 of the accumulator plus the
// offset. That costs a maddubs, a madd, a conversion and an FMA per 32 products of one token (SmolLM2-135M's
// Q4_1 prefill spent 76 % of its time there on the Xeon, 0.22x llama.cpp's AMX build). Here lane j of each
// (row, token) lives in its own register, one token per lane: per (row, block, 16 tokens) 8 dpbusd (the row's
// unsigned weight quad j broadcast, the unsigned operand, against quad j of the 16 signed activations),
// 8 conversions and 8 FMAs by the 16 tokens' scales d_w * d_x, and one multiply and add for the offsets —
// the same operations on the same values as the tiles, lane by lane. hsum8's order, ((a0 + a4) + (a2 + a6)) +
// ((a1 + a5) + (a3 + a7)), is then the adds of whole registers.
#pragma once

#include "kernels/simd/avx512-token-lanes.h"
#include "kernels/simd/int8-weights.h"
#include "quant/q8-1.h"

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace tmill::kernels {
namespace {
namespace q32_min_lanes_avx512 {

using namespace avx512_vnni;
using quant::block_q8_1;

// A packed 16-token group, per block: 8 rows of 64 bytes (row k: bytes 4k..4k+3 of every token, signed), the
// 16 F32 scales d_x, then the 16 F32 sums s_x (zero past the group's tokens, like their lanes).
constexpr size_t k_dx_at = k_pack_quad_bytes;
constexpr size_t k_sx_at = k_dx_at + sizeof(float) * k_pack_tokens;
constexpr size_t k_group_block = k_sx_at + sizeof(float) * k_pack_tokens;

// Per (row, block) of a panel: the block's scale and minimum as F32.
struct entry {
    float dw, m;
};

// Q4_1 or Q5_1 as a format of token_lanes_avx512::prompt_rows (its contract in avx512-token-lanes.h).
template <typename Block>
struct format {
    using block = Block;
    using entry = q32_min_lanes_avx512::entry;
    static constexpr bool in_place = false;
    static constexpr size_t staging_bytes = 32;
    static constexpr size_t pack_block = k_group_block;
    static constexpr int tile_rows = 2;   // 8 accumulators and an offset a row

    static void pack(const char * x, size_t xb, int n, int64_t nb, uint8_t * dst) {
        for (int64_t b = 0; b < nb; ++b) {
            uint8_t * out = dst + size_t(b) * k_group_block;
            __m256i q[k_pack_tokens];
            float dx[k_pack_tokens] = {}, sx[k_pack_tokens] = {};
            for (int t = 0; t < k_pack_tokens; ++t) {
                if (t < n) {
                    const block_q8_1 & blk = reinterpret_cast<const block_q8_1 *>(x + size_t(t) * xb)[b];
                    q[t] = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(blk.qs));
                    dx[t] = _cvtsh_ss(blk.d);
                    sx[t] = _cvtsh_ss(blk.s);
                } else {
                    q[t] = _mm256_setzero_si256();
                }
            }
            store_quads(q, out);
            std::memcpy(out + k_dx_at, dx, sizeof dx);
            std::memcpy(out + k_sx_at, sx, sizeof sx);
        }
    }

    static void prepare_panel(const char * w, size_t wb, int64_t rows, int64_t nb, entry * meta, int8_t * staging) {
        for (int64_t r = 0; r < rows; ++r) {
            const auto * blk = reinterpret_cast<const block *>(w + size_t(r) * wb);
            for (int64_t b = 0; b < nb; ++b) {
                meta[r * nb + b] = {_cvtsh_ss(blk[b].d), _cvtsh_ss(blk[b].m)};
                _mm256_storeu_si256(reinterpret_cast<__m256i *>(staging + size_t(r * nb + b) * staging_bytes), int8_weights<block>::values(blk[b]));
            }
        }
    }

    // R rows x the group's tokens in L's lanes (token_lanes_avx512::prompt_rows' tile contract).
    template <typename L, int R>
    static void tile(const int8_t * q, size_t rs, size_t bs, const entry * meta, int64_t nb, const uint8_t * packed, float * out,
                     const char * pf, int pf_lines) {
        using f32 = typename L::f32;
        f32 acc[R][8], offset[R];
        for (int r = 0; r < R; ++r) {
            offset[r] = L::zero();
            for (f32 & a : acc[r]) a = L::zero();
        }
        for (int64_t b = 0; b < nb; ++b) {
            for (int j = 0; j < pf_lines; ++j) _mm_prefetch(pf + (size_t(b) * pf_lines + j) * 64, _MM_HINT_T1);
            const uint8_t * xp = packed + size_t(b) * k_group_block;
            const f32 dx = L::load(reinterpret_cast<const float *>(xp + k_dx_at));
            const f32 sx = L::load(reinterpret_cast<const float *>(xp + k_sx_at));
            f32 scale[R];
            for (int r = 0; r < R; ++r) scale[r] = L::mul(L::set1(meta[r * nb + b].dw), dx);
#pragma GCC unroll 8
            for (int j = 0; j < 8; ++j) {
                const typename L::vi xv = L::load_i(xp + 64 * j);
                for (int r = 0; r < R; ++r) {
                    int32_t quad;
                    std::memcpy(&quad, q + size_t(r) * rs + size_t(b) * bs + 4 * j, 4);
                    acc[r][j] = L::fmadd(scale[r], L::to_f32(L::dpbusd(L::set1_i(0), L::set1_i(quad), xv)), acc[r][j]);
                }
            }
            for (int r = 0; r < R; ++r) offset[r] = L::add(offset[r], L::mul(L::set1(meta[r * nb + b].m), sx));
        }
        for (int r = 0; r < R; ++r) {
            const f32 h = L::add(L::add(L::add(acc[r][0], acc[r][4]), L::add(acc[r][2], acc[r][6])),
                                 L::add(L::add(acc[r][1], acc[r][5]), L::add(acc[r][3], acc[r][7])));
            L::store(out + 16 * r, L::add(h, offset[r]));
        }
    }
};

// Rows [r0, r1) x tokens [0, n_tok) of Q4_1 or Q5_1 weights: false when the scratch buffers cannot be allocated
// (the caller then runs matmul-q32.cpp's tiles, which give the same bits).
template <typename Block>
bool rows(const void * w, size_t wb, const void * x, size_t xb, int64_t n_tok, int64_t n_in, int64_t r0, int64_t r1, float * y,
          int64_t ldy) {
    return token_lanes_avx512::prompt_rows<format<Block>>(static_cast<const char *>(w), wb, static_cast<const char *>(x), xb,
                                                          n_tok, n_in / 32, r0, r1, y, ldy);
}

} // namespace q32_min_lanes_avx512
} // namespace
} // namespace tmill::kernels
