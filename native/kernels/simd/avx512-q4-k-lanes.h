// The avx512 level's Q4_K matmul for prompts and batches: 16 tokens in the lanes of a zmm (8 in a ymm for a
// group of at most 8), through the prompt driver of avx512-token-lanes.h, with Q4_K's numerics unchanged
// (kernels/ref/matmul-k.cpp, NOTE(k-matmul-ggml)): per (row, token) and super-block the exact integer sums
// isum = sum_j sc_j * dot_j and msum = sum_j m_j * xsum_j, then acc = fma(float(isum), d_w * d_x, acc) and
// macc = fma(float(msum), dmin_w * d_x, macc), acc - macc at the end — every level's bits, whatever the token
// count. Included by avx512-int-dots.h only (AVX-512 + VNNI), internal linkage as tiling.h.
//
// NOTE(q4-k-lanes): why. The 4-row x 4-token tiles of matmul-k.cpp spend per (row, token) and 64 weights a
// maddubs and a dpwssd on 512-bit registers plus the slots' reductions: about 19 multiply-adds a cycle on the
// EPYC, the prefill of a Q4_K_M model bound there at llama.cpp's rate. Here a dpbusd does 64 multiply-adds of
// 16 tokens: per (row, super-block, 16 tokens) 64 dpbusd (each a weight quad broadcast from the panel's int8
// copy, the signed operand, against x + 128 of the 16 tokens), 8 vpmulld by the sub-block scales, 4 dpwssd
// for the mins (the activations' sub-block sums packed as word pairs, the mins as word pairs) and the two
// F32 steps, 16 tokens at once. The x + 128 of the unsigned operand is undone by -128 * sum_j sc_j * sum(w_j),
// the accumulator's start, computed with the panel. The integer sums are exact (|isum| < 2^26 with the
// offset), so their order is free; the float steps are the reference's, lane by lane.
#pragma once

#include "kernels/simd/avx512-token-lanes.h"
#include "kernels/simd/k4-headers.h"
#include "quant/q4-k.h"
#include "quant/q8-k.h"

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace tmill::kernels {
namespace {
namespace q4_k_lanes_avx512 {

using namespace avx512_vnni;
using quant::block_q4_k;
using quant::block_q8_k;
using quant::qk_k;

// A packed 16-token group, per super-block: 64 rows of 64 bytes (row k: bytes 4k..4k+3 of every token, as
// x + 128), 4 rows of the sub-block sums (row i: per token the words xsum_2i, xsum_2i+1, xsum_j =
// bsums[2j] + bsums[2j + 1]), then the 16 F32 scales d_x (zero past the group's tokens, like their lanes).
constexpr int k_quads = qk_k / 4;
constexpr size_t k_xsum_at = size_t(k_quads) * 64;
constexpr int k_xsum_rows = 4;
constexpr size_t k_dx_at = k_xsum_at + k_xsum_rows * 64;
constexpr size_t k_group_block = k_dx_at + sizeof(float) * k_pack_tokens;

// Per (row, super-block) of a panel, 64 bytes: what the tile broadcasts.
struct entry {
    int32_t sc[8];     // the sub-block scales (6 bits) as int32: vpmulld's operand
    int32_t mins[4];   // the mins m_2i | m_2i+1 << 16: dpwssd's word pairs
    int32_t corr;      // -128 * sum_j sc_j * sum(w_j): the accumulator's start
    float dw, dmin;
    int32_t unused;
};
static_assert(sizeof(entry) == 64, "one cache line per entry");

// One super-block's entry and int8 weights (element order, 256 bytes at dst) from its block and its unpacked
// scales and mins (sm: bytes 0..7 and 8..15, k4_scales_mins' lane).
inline void prepare_block(const block_q4_k & blk, __m128i sm, entry & e, int8_t * dst) {
    const __m256i low4 = _mm256_set1_epi8(0x0f);
    const __m256i scales = _mm256_broadcastsi128_si256(sm);
    // sum_j sc_j * sum(w_j) in 16-bit lanes (at most 8 * 2 * 15 * 63 each), then one madd.
    __m256i scaled = _mm256_setzero_si256();
    for (int c = 0; c < 4; ++c) {
        const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(blk.qs + 32 * c));
        const __m256i lo = _mm256_and_si256(v, low4), hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), low4);
        _mm256_storeu_si256(reinterpret_cast<__m256i *>(dst + 64 * c), lo);
        _mm256_storeu_si256(reinterpret_cast<__m256i *>(dst + 64 * c + 32), hi);
        scaled = _mm256_add_epi16(scaled, _mm256_maddubs_epi16(lo, _mm256_shuffle_epi8(scales, _mm256_set1_epi8(char(2 * c)))));
        scaled = _mm256_add_epi16(scaled, _mm256_maddubs_epi16(hi, _mm256_shuffle_epi8(scales, _mm256_set1_epi8(char(2 * c + 1)))));
    }
    const __m256i s32 = _mm256_madd_epi16(scaled, _mm256_set1_epi16(1));
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(s32), _mm256_extracti128_si256(s32, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
    _mm256_storeu_si256(reinterpret_cast<__m256i *>(e.sc), _mm256_cvtepu8_epi32(sm));
    _mm_storeu_si128(reinterpret_cast<__m128i *>(e.mins), _mm_cvtepu8_epi16(_mm_srli_si128(sm, 8)));
    e.corr = -128 * _mm_cvtsi128_si32(s);
    e.dw = _cvtsh_ss(blk.d);
    e.dmin = _cvtsh_ss(blk.dmin);
}

// Q4_K as a format of token_lanes_avx512::prompt_rows (its contract in avx512-token-lanes.h).
struct format {
    using block = block_q4_k;
    using entry = q4_k_lanes_avx512::entry;
    static constexpr bool in_place = false;
    static constexpr size_t staging_bytes = qk_k;
    static constexpr size_t pack_block = k_group_block;
    static constexpr int tile_rows = 4;   // a dpbusd chain, isum and the two F32 chains: 4 registers a row
    static constexpr int panel_unit = tile_rows;

    // Tokens x .. x + n - 1 (1 <= n <= 16) of nb super-blocks each, packed as above: each 32-byte chunk of the 16
    // tokens through vnni-pack.h's transpose, and the sums through it too (4 of its 8 rows).
    static void pack(const char * x, size_t xb, int n, int64_t nb, uint8_t * dst) {
        const __m256i bias = _mm256_set1_epi8(char(0x80));
        for (int64_t b = 0; b < nb; ++b) {
            uint8_t * out = dst + size_t(b) * k_group_block;
            const block_q8_k * blk[k_pack_tokens];
            for (int t = 0; t < k_pack_tokens; ++t) blk[t] = t < n ? reinterpret_cast<const block_q8_k *>(x + size_t(t) * xb) + b : nullptr;
            __m256i q[k_pack_tokens];
            for (int c = 0; c < qk_k / 32; ++c) {
                for (int t = 0; t < k_pack_tokens; ++t)
                    q[t] = blk[t] ? _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(blk[t]->qs + 32 * c)), bias)
                                  : _mm256_setzero_si256();
                store_quads(q, out + size_t(c) * k_pack_quad_bytes);
            }
            // Per token the 8 sums as words in dwords 0..3: madd pairs the 16 sums ([s0..s3 | s4..s7] as int32),
            // packs narrows them per 128-bit lane and the permute joins the lanes' low halves.
            float dx[k_pack_tokens] = {};
            for (int t = 0; t < k_pack_tokens; ++t) {
                if (!blk[t]) {
                    q[t] = _mm256_setzero_si256();
                    continue;
                }
                const __m256i s = _mm256_madd_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(blk[t]->bsums)), _mm256_set1_epi16(1));
                q[t] = _mm256_permute4x64_epi64(_mm256_packs_epi32(s, _mm256_setzero_si256()), 0xd8);
                dx[t] = blk[t]->d;
            }
            alignas(64) uint8_t sums[k_pack_quad_bytes];
            store_quads(q, sums);
            std::memcpy(out + k_xsum_at, sums, k_xsum_rows * 64);
            std::memcpy(out + k_dx_at, dx, sizeof dx);
        }
    }

    // Rows w .. w + rows - 1: their entries and their weights as int8 in element order (256 bytes per super-block),
    // the headers unpacked two super-blocks at a time (a scalar unpacking was a fifth of the preparation).
    static void prepare_panel(const char * w, size_t wb, int64_t rows, int64_t nb, entry * meta, int8_t * staging) {
        for (int64_t r = 0; r < rows; ++r) {
            const auto * blk = reinterpret_cast<const block_q4_k *>(w + size_t(r) * wb);
            for (int64_t b = 0; b < nb; b += 2) {
                const bool pair = b + 1 < nb;
                const __m256i sm = k4_scales_mins(k4_headers(blk + b, blk + (pair ? b + 1 : b)));
                prepare_block(blk[b], _mm256_castsi256_si128(sm), meta[r * nb + b], staging + size_t(r * nb + b) * qk_k);
                if (pair)
                    prepare_block(blk[b + 1], _mm256_extracti128_si256(sm, 1), meta[r * nb + b + 1], staging + size_t(r * nb + b + 1) * qk_k);
            }
        }
    }

    // R rows x the group's tokens in L's lanes (token_lanes_avx512::prompt_rows' tile contract): per super-block
    // and row, each sub-block's dot in one dpbusd chain, scaled by vpmulld into the row's isum (started at
    // corr), the mins' msum by 4 dpwssd, and the reference's two F32 steps; acc - macc at the end.
    template <typename L, int R>
    static void tile(const int8_t * q, size_t rs, size_t bs, const entry * meta, int64_t nb, const uint8_t * packed, float * out,
                     const char * pf, int pf_lines) {
        typename L::f32 acc[R], macc[R];
        for (int r = 0; r < R; ++r) acc[r] = macc[r] = L::zero();
        for (int64_t b = 0; b < nb; ++b) {
            token_lanes_avx512::prefetch_panel_lines(pf, b, pf_lines);
            const uint8_t * xp = packed + size_t(b) * k_group_block;
            const entry * e[R];
            typename L::vi isum[R];
            for (int r = 0; r < R; ++r) {
                e[r] = meta + r * nb + b;
                isum[r] = L::set1_i(e[r]->corr);
            }
            for (int j = 0; j < 8; ++j) {
                typename L::vi c[R];
                for (int r = 0; r < R; ++r) c[r] = L::set1_i(0);
                for (int k = 0; k < 8; ++k) {
                    const typename L::vi xv = L::load_i(xp + 64 * (8 * j + k));
#pragma GCC unroll 4
                    for (int r = 0; r < R; ++r) {
                        int32_t quad;
                        std::memcpy(&quad, q + size_t(r) * rs + size_t(b) * bs + 32 * j + 4 * k, 4);
                        c[r] = L::dpbusd(c[r], xv, L::set1_i(quad));
                    }
                }
                for (int r = 0; r < R; ++r) isum[r] = L::add_i(isum[r], L::mullo_i(c[r], L::set1_i(e[r]->sc[j])));
            }
            typename L::vi xs[k_xsum_rows];
            for (int i = 0; i < k_xsum_rows; ++i) xs[i] = L::load_i(xp + k_xsum_at + 64 * i);
            const typename L::f32 dx = L::load(reinterpret_cast<const float *>(xp + k_dx_at));
            for (int r = 0; r < R; ++r) {
                typename L::vi msum = L::set1_i(0);
                for (int i = 0; i < k_xsum_rows; ++i) msum = L::dpwssd(msum, xs[i], L::set1_i(e[r]->mins[i]));
                acc[r] = L::fmadd(L::to_f32(isum[r]), L::mul(L::set1(e[r]->dw), dx), acc[r]);
                macc[r] = L::fmadd(L::to_f32(msum), L::mul(L::set1(e[r]->dmin), dx), macc[r]);
            }
        }
        for (int r = 0; r < R; ++r) L::store(out + 16 * r, L::sub(acc[r], macc[r]));
    }
};

// Rows [r0, r1) x tokens [0, n_tok): false when the scratch buffers cannot be allocated (the caller then runs
// the tiles of matmul-k.cpp, which give the same bits).
inline bool rows(const void * w, size_t wb, const void * x, size_t xb, int64_t n_tok, int64_t n_in, int64_t r0, int64_t r1,
                 float * y, int64_t ldy) {
    return token_lanes_avx512::prompt_rows<format>(static_cast<const char *>(w), wb, static_cast<const char *>(x), xb, n_tok,
                                                   n_in / qk_k, r0, r1, y, ldy);
}

} // namespace q4_k_lanes_avx512
} // namespace
} // namespace tmill::kernels
