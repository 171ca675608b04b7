// Matmul rows for Q4_K, Q5_K and Q6_K weights against Q8_K activations, once per ISA.
//
// NOTE(k-matmul): per (row, token) pair and super-block the scaled integer sums are exact and are converted
// once, then added with weight (d_w * d_x) to a float accumulator; the Q4_K/Q5_K mins are accumulated apart
// and subtracted at the end; Q6_K's -32 offset is folded into the integer sums. Q4_K and Q6_K accumulate as
// llama.cpp's x86 builds do (kernels/ref/matmul-k.cpp, NOTE(k-matmul-ggml)), so every level gives the
// reference's bits — but for Q6_K on the AVX-512 levels, which take the block step (NOTE(q6-k-block-step)); Q5_K's float accumulator width is the ISA's (int_dots: 32 weights a register on AVX2,
// 64 with VNNI on AVX-512), so its levels may differ in the last bits (each level's order is written out lane
// by lane in test/cpp/kernels-matmul-test.cpp, which holds the level to it). The sequence per pair is the same
// in every tile shape (batch invariance).
//
// NOTE(k-matmul-tiles): Q4_K's float work is per (row, token) pair a scalar FMA chain, so its tiles give each
// of 4 row slots a lane: the slots' headers (d, dmin and the 6-bit scales and mins) are loaded and unpacked
// together, their integer lanes are reduced together to one vector of 4 scale totals and 4 min totals per
// token, and both chains of the 4 slots advance by one 8-lane FMA — per lane the reference's fma(total,
// d_w * d_x, chain), so a row's bits do not depend on its slot or on its neighbours. Prompts (2..4 tokens a
// tile) fill the slots with 4 adjacent rows, so each unpacked weight chunk serves 4 tokens and the
// per-super-block work is shared by 16 pairs. Up to 7 tokens (decode, a few streams; 1..4 tokens a chunk) the
// slots take 4 rows a quarter of the range apart instead (tiling.h few_tokens): 4 adjacent rows, interleaved, came
// from memory at half the rate on the AMD EPYC (1536-wide rows; software prefetch did not close the gap), while
// rows far apart stream at full rate and still share the headers' unpacking and the reductions (one token:
// 1.55x the old one-row-in-every-slot tiles from memory). On the avx512 level 8 tokens and more take 16-token
// lanes instead (avx512-q4-k-lanes.h). Q6_K's float work is already 8 lanes per pair; with rows up to
// k_q6_k_one_row_x's width and up to 4 tokens its tiles take 2 rows half the range apart (the sets), longer rows
// one row in decode (4 adjacent rows were 1.1 to 4 times slower there); in
// prompts one row x up to 4 tokens while the tile's 4 activation rows fit in half a 32 KiB L1 (k_q6_k_one_row_x:
// rows up to 3584 wide), 4 rows x up to 4 tokens above, where the rows share the activation loads (measured:
// 1536-wide rows, one row 5-8% faster than 4 on AVX-512 and 16-24% on AVX2; 8960-wide, 4 rows 4-12% faster on
// AVX-512, within 3% on AVX2). The 4-row tile's row loop is unrolled (a loop kept its 16 accumulators in
// memory). Q5_K's float work is per pair the ISA's width (8 or 16 lanes, and the mins); its tiles are one row
// in decode, and in prompts 2 rows x up to 4 tokens — 4-row tiles spilled
// their 16 (AVX2) or 32 (AVX-512) accumulators and were 7-10% slower than 1 or 2 rows on AVX-512 with
// 1536-wide rows, one-row tiles 8-13% slower than 2 or 4 rows on AVX2 with 8960-wide ones, 2 rows within 5% of
// the best everywhere. Its headers unpack as Q4_K's (k4_scales_mins, two rows at a time) and its integer lanes
// are Q4_K's with the fifth bits. Only the integer lane sums of one row's super-block (int_dots::k_lanes,
// int_dots::q6_k_lanes) and Q5_K's accumulators (int_dots::q5_k_acc) are written per ISA.
//
// NOTE(q4-k-x16): Q4_K weights repacked 16 rows at a time at load (quant/q4-k-x16.h, model/repack.h), the
// layout every token count of a Q4_K_M model runs on at the avx2 and avx512 levels. In the GGUF layout each row's
// nibbles and scales are unpacked on their own and each row's lanes reduced at the end: one EPYC core ran a
// one-token GEMV at about 40 G multiply-adds a second (21 GB/s of weights, short of its share of the read
// bandwidth). Repacked, one load holds the same quad of qs of the rows of a vector (int_dots::x16: 16 rows in a
// zmm, 8 in a ymm), so per sub-block and token 8 dot steps against the token's quad (broadcast) leave each row's
// exact dot in its lane — vpdpbusd of the unsigned nibbles on AVX-512; maddubs added in int16 lanes on AVX2 (at
// most 8 * 3840), then one madd by the scales — the rows' scales apply per lane, the mins take 4 word-pair madds
// a super-block, and the reference's two F32 steps run a vector of rows at once (the integer sums are exact,
// |isum| < 2^22, so their order is free: every level gives the reference's bits). Up to 4 tokens share each
// load and unpacking. One EPYC core, 1536 -> 8960 in L3 (GGUF layout -> repacked): avx512 1 token 0.33 ->
// 0.15 ms, 4 tokens 0.76 -> 0.33, 16 tokens 1.67 -> 1.3 (the GGUF layout's 16-token lanes), 256 tokens 22.1
// -> 21.7; avx2 1 token 0.30 -> 0.23, 4 tokens 0.79 -> 0.65, 16 tokens 3.9 -> 2.6, 256 tokens 53 -> 42; from
// memory (1536 -> 151936, one token) avx512 6.0 -> 4.6 ms, avx2 5.7 -> 5.1. So the repacked rows take this
// kernel at every token count.
#include "kernels/simd/isa.h"
#include "kernels/simd/k4-headers.h"
#include "kernels/tiling.h"
#include "quant/q4-k-x16.h"

#include <cstring>

namespace tmill::kernels::TM_KERNELS_LEVEL {

namespace {

using quant::block_q4_k;
using quant::block_q5_k;
using quant::block_q6_k;
using quant::block_q8_k;
using quant::block_q4_k_x16;
using quant::k_x16_rows;

// Q4_K, G rows (1..4) x T tokens (1..4), row g at w + g * wb (adjacent rows, or a few tokens' sets a stride apart:
// tiling.h few_tokens). Slot s of the 4 holds row min(s, G - 1); headers are loaded in slot pairs (0, 2) and (1, 3),
// one row per 128-bit lane, which the reductions below expect.
template <int G, int T>
void tile_q4_k(const char * w, size_t wb, const char * x, size_t xb, int64_t n_in, float * y, int64_t ldy) {
    static_assert(G >= 1 && G <= 4 && T >= 1 && T <= 4, "a Q4_K tile has 1..4 rows and 1..4 tokens");
    const int64_t nb = n_in / quant::qk_k;
    const block_q4_k * wr[4];
    for (int s = 0; s < 4; ++s) wr[s] = reinterpret_cast<const block_q4_k *>(w + size_t(s < G ? s : G - 1) * wb);
    const block_q8_k * xr[T];
    for (int t = 0; t < T; ++t) xr[t] = reinterpret_cast<const block_q8_k *>(x + size_t(t) * xb);
    // Per token: lanes 0..3 the scale chains of lanes/rows 0..3, lanes 4..7 their min chains.
    __m256 chain[T];
    for (int t = 0; t < T; ++t) chain[t] = _mm256_setzero_ps();
    const __m256i d_order = _mm256_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15,
                                             0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15);
    for (int64_t b = 0; b < nb; ++b) {
        const __m256i h02 = k4_headers(wr[0] + b, wr[2] + b), h13 = k4_headers(wr[1] + b, wr[3] + b);
        const __m256i sm02 = k4_scales_mins(h02), sm13 = k4_scales_mins(h13);
        const __m128i sm[4] = {_mm256_castsi256_si128(sm02), _mm256_castsi256_si128(sm13), _mm256_extracti128_si256(sm02, 1),
                               _mm256_extracti128_si256(sm13, 1)};
        // d0..3 then dmin0..3 (dword 0 of each header is d | dmin << 16).
        const __m256i hd = _mm256_shuffle_epi8(_mm256_permute4x64_epi64(_mm256_unpacklo_epi32(h02, h13), 0x88), d_order);
        const __m256 dw = _mm256_cvtph_ps(_mm256_castsi256_si128(hd));
        // The mins as words, row 0 | row 2 and row 1 | row 3.
        const __m256i mw02 = _mm256_unpackhi_epi8(sm02, _mm256_setzero_si256());
        const __m256i mw13 = _mm256_unpackhi_epi8(sm13, _mm256_setzero_si256());

        const int8_t * xq[T];
        for (int t = 0; t < T; ++t) xq[t] = xr[t][b].qs;
        __m256i lanes[4][T];
        // Unrolled, so the slots' lanes are registers (a loop over s kept them in memory).
#pragma GCC unroll 4
        for (int s = 0; s < G; ++s) {
            int_dots::k_lanes_t wide[T];
            int_dots::template k_lanes<T, false>(wr[s][b].qs, nullptr, sm[s], xq, wide);
            for (int t = 0; t < T; ++t) lanes[s][t] = int_dots::fold8(wide[t]);
        }
        for (int s = G; s < 4; ++s)
            for (int t = 0; t < T; ++t) lanes[s][t] = lanes[G - 1][t];

        for (int t = 0; t < T; ++t) {
            // The activations' 32-element sums xs_j = bsums[2j] + bsums[2j + 1] as words, xs0..7 in both halves.
            const __m256i xs32 = _mm256_madd_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(xr[t][b].bsums)),
                                                   _mm256_set1_epi16(1));
            const __m256i xs = _mm256_permute4x64_epi64(_mm256_packs_epi32(xs32, xs32), 0x88);
            // Min totals: per lane of m02 (row 0 | row 2) and m13 the partial products m_j * xs_j, reduced to
            // [m0 m1 m0 m1 | m2 m3 m2 m3] and then to m0..3 in the upper half.
            const __m256i m02 = _mm256_madd_epi16(mw02, xs), m13 = _mm256_madd_epi16(mw13, xs);
            __m256i m = _mm256_add_epi32(_mm256_unpacklo_epi32(m02, m13), _mm256_unpackhi_epi32(m02, m13));
            m = _mm256_add_epi32(m, _mm256_shuffle_epi32(m, 0x4e));
            // Scale totals: the 4 rows' 8 lanes each, down to i0..3 in both halves.
            const __m256i i01 = _mm256_add_epi32(_mm256_unpacklo_epi32(lanes[0][t], lanes[1][t]),
                                                 _mm256_unpackhi_epi32(lanes[0][t], lanes[1][t]));
            const __m256i i23 = _mm256_add_epi32(_mm256_unpacklo_epi32(lanes[2][t], lanes[3][t]),
                                                 _mm256_unpackhi_epi32(lanes[2][t], lanes[3][t]));
            __m256i i = _mm256_add_epi32(_mm256_unpacklo_epi64(i01, i23), _mm256_unpackhi_epi64(i01, i23));
            i = _mm256_add_epi32(i, _mm256_permute2x128_si256(i, i, 0x01));
            const __m256i totals = _mm256_blend_epi32(i, _mm256_permute4x64_epi64(m, 0x88), 0xf0);
            const __m256 scale = _mm256_mul_ps(dw, _mm256_set1_ps(xr[t][b].d));
            chain[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(totals), scale, chain[t]);
        }
    }
    for (int t = 0; t < T; ++t) {
        alignas(16) float out[4];
        _mm_store_ps(out, _mm_sub_ps(_mm256_castps256_ps128(chain[t]), _mm256_extractf128_ps(chain[t], 1)));
        for (int r = 0; r < G; ++r) y[t * ldy + r] = out[r];
    }
}

// Q5_K, R rows x T tokens: per (row, token) and super-block the exact integer lanes of sum_j sc_j * dot_j
// (int_dots::k_lanes, Q4_K's lanes with the fifth bits) and the lanes m_j * xsum_j of the mins (one madd of the
// mins, each twice as words, by the activations' 16-element sums), added into the ISA's float accumulators
// (int_dots::q5_k_acc, NOTE(k-matmul)). The headers are unpacked two rows at a time by Q4_K's k4_scales_mins;
// the rows share the activations' loads and 16-element sums. A row's operations are the same in every tile
// shape (NOTE(k-matmul-tiles)).
template <int R, int T>
void tile_q5_k(const char * w, size_t wb, const char * x, size_t xb, int64_t n_in, float * y, int64_t ldy) {
    const int64_t nb = n_in / quant::qk_k;
    int_dots::q5_k_acc<R, T> acc;
    for (int64_t b = 0; b < nb; ++b) {
        const block_q8_k * xs[T];
        const int8_t * xq[T];
        __m256i bsums[T];
        for (int t = 0; t < T; ++t) {
            xs[t] = reinterpret_cast<const block_q8_k *>(x + size_t(t) * xb) + b;
            xq[t] = xs[t]->qs;
            bsums[t] = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(xs[t]->bsums));
        }
        if constexpr (T > 1) prefetch_next_tile<R, block_q5_k>(w, wb, b);
        const block_q5_k * wr[R];
        for (int r = 0; r < R; ++r) wr[r] = reinterpret_cast<const block_q5_k *>(w + size_t(r) * wb) + b;
        // Per row the scales in bytes 0..7 and the mins in bytes 8..15.
        __m128i sm[R];
        for (int r = 0; r < R; r += 2) {
            const __m256i pair = k4_scales_mins(k4_headers(wr[r], wr[r + 1 < R ? r + 1 : r]));
            sm[r] = _mm256_castsi256_si128(pair);
            if (r + 1 < R) sm[r + 1] = _mm256_extracti128_si256(pair, 1);
        }
        // Unrolled, so each row's accumulators are registers (a loop over r kept them in memory).
#pragma GCC unroll 4
        for (int r = 0; r < R; ++r) {
            int_dots::k_lanes_t lanes[T];
            int_dots::template k_lanes<T, true>(wr[r]->qs, wr[r]->qh, sm[r], xq, lanes);
            const __m256i mw = _mm256_cvtepu8_epi16(_mm_unpackhi_epi8(sm[r], sm[r]));   // m0 m0 m1 m1 .. m7 m7
            const float d = _cvtsh_ss(wr[r]->d), dmin = _cvtsh_ss(wr[r]->dmin);
            for (int t = 0; t < T; ++t) acc.add(r, t, xs[t]->d * d, lanes[t], xs[t]->d * dmin, _mm256_madd_epi16(mw, bsums[t]));
        }
    }
    acc.store(y, ldy);
}

// Q6_K's float step per (row, token) pair and super-block, after each super-block (end_block). llama.cpp's x86
// order (the AVX2 level's, NOTE(k-matmul-ggml)): the 8 lanes into an 8-lane accumulator by fma(d_x * d_w, lane,
// acc), hsum8 at the end. The block step (the AVX-512 levels', kernels/block-step/step.h block_step_k): the
// lanes' exact total isum, then acc = fma(float(isum), d_x * d_w, acc), a scalar chain per pair — the totals of
// up to 8 pairs reduced together, so the step costs about what the 8-lane FMA did.
//
// NOTE(q6-k-block-step): why two numerics for Q6_K. llama.cpp's x86 order keeps 8 float lanes per (row, token),
// which a tile's whole dot cannot give, so the AMX level had no Q6_K tiles and Qwen2.5-Coder-1.5B Q4_K_M's prefill
// spent 27 % of its time in this kernel on the Xeon. ggml's own AMX backend computes Q6_K with one exact sum per
// super-block (ggml-cpu/amx/mmq.cpp: the sub-block scales applied to the tile sums in integers, then
// fma(cvt(sumi), d_x * d_w, acc)), so the AVX-512 levels take that step — the bits of the AMX tiles
// (kernels/amx/matmul-q6-k.cpp, NOTE(amx-q6-k)) and of block_step_ref::matmul_q6_k — and the AVX2 level and the
// baseline keep llama.cpp's x86 order, as for the 32-block types (docs/kernels.md, "Why follow llama.cpp's
// rounding").
template <int R, int T, bool BlockStep>
struct q6_k_acc;
template <int R, int T>
struct q6_k_acc<R, T, false> {
    tile_acc<R, T> tile;
    void add(int r, int t, __m256i lanes, float scale) {
        tile.v[r][t] = _mm256_fmadd_ps(_mm256_set1_ps(scale), _mm256_cvtepi32_ps(lanes), tile.v[r][t]);
    }
    void end_block() {}
    void store(float * y, int64_t ldy) const { tile.store(y, ldy); }
};
template <int R, int T>
struct q6_k_acc<R, T, true> {
    static constexpr int pairs = R * T, padded = (pairs + 7) / 8 * 8;
    __m128 chain[pairs];
    __m256i lanes[padded];   // the super-block's lanes of pair r * T + t (zero past the pairs)
    float scale[pairs];
    q6_k_acc() {
        for (auto & c : chain) c = _mm_setzero_ps();
        for (auto & l : lanes) l = _mm256_setzero_si256();
    }
    void add(int r, int t, __m256i v, float s) {
        lanes[r * T + t] = v;
        scale[r * T + t] = s;
    }
    void end_block() {
        for (int g = 0; g < padded; g += 8) {
            alignas(32) float total[8];
            if (pairs - g <= 4) {   // decode's 1 or 2 pairs, a few tokens' 4: half the reduction
                const __m256i h = _mm256_hadd_epi32(_mm256_hadd_epi32(lanes[g], lanes[g + 1]), _mm256_hadd_epi32(lanes[g + 2], lanes[g + 3]));
                _mm_store_ps(total, _mm_cvtepi32_ps(_mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1))));
            } else {
                _mm256_store_ps(total, _mm256_cvtepi32_ps(sums8(lanes + g)));
            }
            for (int i = 0; i < 8 && g + i < pairs; ++i)
                chain[g + i] = _mm_fmadd_ss(_mm_set_ss(total[i]), _mm_set_ss(scale[g + i]), chain[g + i]);
        }
    }
    void store(float * y, int64_t ldy) const {
        for (int r = 0; r < R; ++r)
            for (int t = 0; t < T; ++t) y[t * ldy + r] = _mm_cvtss_f32(chain[r * T + t]);
    }
};

// How a Q6_K tile prefetches: not at all (one token), each row this many super-blocks ahead (a few tokens' sets
// spread over the range: NOTE(q6-k-sets-prefetch)), or the next tile's rows (the prompt tiles of adjacent rows,
// NOTE(next-tile-prefetch)).
enum class q6_k_prefetch { none, ahead, next_tile };
// A few tokens' Q6_K tiles (2 to 4, the rows streamed once: tiling.h few_tokens) ask each row's super-block this many
// ahead into L1 as they read one. NOTE(q6-k-sets-prefetch): their work per byte is 2 to 4 times one token's, and from
// memory the hardware prefetcher alone left them at half the rate they reach in L3: the scratch one-matmul
// program, 8960 -> 1536 on 2 threads, `avx2` on the AMD EPYC (Zen 4), 2 and 4 tokens 57-58 and 80-86 G
// multiply-adds a second from memory without, 85-87 and 120 with (4 super-blocks ahead: 77 and 113-117); one
// token, already at the read rate, and the prompt tiles, which read each row once per block of tokens from L2,
// were no faster with it.
constexpr int64_t k_q6_k_sets_prefetch_blocks = 8;

// Q6_K, R rows x T tokens: per (row, token) and super-block ggml's 8 int32 lanes (NOTE(k-matmul-ggml)), each
// starting at -32 * (sc * xsum) of sub-blocks 2l and 2l + 1 (the scales times -32 still fit 16 bits, so one
// madd with the activations' 16-element sums), the weights' part added by int_dots::q6_k_lanes; then the level's
// float step (q6_k_acc). A row's operations are the same in every tile shape (NOTE(k-matmul-tiles)). Row r at w + r *
// wb (adjacent rows, or a few tokens' sets a stride apart); P: the prefetch (past a row's end it only costs a read).
template <int R, int T, q6_k_prefetch P>
void tile_q6_k(const char * w, size_t wb, const char * x, size_t xb, int64_t n_in, float * y, int64_t ldy) {
    const int64_t nb = n_in / quant::qk_k;
    const block_q6_k * rows[R];
    for (int r = 0; r < R; ++r) rows[r] = reinterpret_cast<const block_q6_k *>(w + size_t(r) * wb);
    q6_k_acc<R, T, int_dots::q6_k_block_step> acc;
    for (int64_t b = 0; b < nb; ++b) {
        const block_q8_k * xs[T];
        const int8_t * xq[T];
        for (int t = 0; t < T; ++t) {
            xs[t] = reinterpret_cast<const block_q8_k *>(x + size_t(t) * xb) + b;
            xq[t] = xs[t]->qs;
        }
        if constexpr (P == q6_k_prefetch::ahead)
            for (int r = 0; r < R; ++r) prefetch_object<_MM_HINT_T0>(rows[r] + b + k_q6_k_sets_prefetch_blocks);
        if constexpr (P == q6_k_prefetch::next_tile) prefetch_next_tile<R, block_q6_k>(w, wb, b);
        // Unrolled, so each row's accumulators are registers (a loop over r kept them in memory).
#pragma GCC unroll 4
        for (int r = 0; r < R; ++r) {
            const block_q6_k * wblk = rows[r] + b;
            const __m256i scn = _mm256_sub_epi16(_mm256_setzero_si256(),
                                                 _mm256_slli_epi16(_mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i *>(wblk->scales))), 5));
            __m256i lanes[T];
            for (int t = 0; t < T; ++t) lanes[t] = _mm256_madd_epi16(scn, _mm256_loadu_si256(reinterpret_cast<const __m256i *>(xs[t]->bsums)));
            int_dots::template q6_k_lanes<T>(wblk, xq, lanes);
            const float d = _cvtsh_ss(wblk->d);
            for (int t = 0; t < T; ++t) acc.add(r, t, lanes[t], xs[t]->d * d);
        }
        acc.end_block();
    }
    acc.store(y, ldy);
}

template <int R, int T>
struct q4_k_kernel {
    static void fn(const char * w, size_t wb, const char * x, size_t xb, int64_t n, float * y, int64_t ldy) {
        tile_q4_k<R, T>(w, wb, x, xb, n, y, ldy);
    }
};
template <int R, int T>
struct q5_k_kernel {
    static void fn(const char * w, size_t wb, const char * x, size_t xb, int64_t n, float * y, int64_t ldy) {
        tile_q5_k<R, T>(w, wb, x, xb, n, y, ldy);
    }
};
// Q6_K: the tile walk's tiles of adjacent rows (several tokens: the next tile's rows prefetched), and a few tokens'
// sets (tiling.h few_tokens: each row prefetched ahead).
template <int R, int T>
struct q6_k_kernel {
    static void fn(const char * w, size_t wb, const char * x, size_t xb, int64_t n, float * y, int64_t ldy) {
        tile_q6_k<R, T, (T > 1 ? q6_k_prefetch::next_tile : q6_k_prefetch::none)>(w, wb, x, xb, n, y, ldy);
    }
};
template <int R, int T>
struct q6_k_set_kernel {
    static void fn(const char * w, size_t stride, const char * x, size_t xb, int64_t n, float * y, int64_t ldy) {
        tile_q6_k<R, T, (T > 1 ? q6_k_prefetch::ahead : q6_k_prefetch::none)>(w, stride, x, xb, n, y, ldy);
    }
};

// Q6_K prompt tiles are one row while a tile's 4 activation rows fit in half a 32 KiB L1 data cache (the
// rows then stream past activations held in L1), 4 rows sharing each activation load above that
// (NOTE(k-matmul-tiles)).
constexpr size_t k_q6_k_one_row_x = 16 * 1024;

// Below this many tokens Q4_K takes few_tokens over sets of 4 rows; from it on the tile walk (weights read once
// per block of tokens, from L2) or the lanes. One 1536 -> 151936 matmul from memory on one thread, AMD EPYC,
// avx512: the walk took 22-31 ms for 2-4 tokens and 38-45 ms for 5-7, the sets 8.3-14.4 ms for 2-4 tokens,
// two chunks 20-25 ms for 5-7.
constexpr int64_t k_q4_k_walk_min_tokens = 8;

// Q4_K: from D::q4_k_lanes_min_tokens tokens on, where the level has them, 16 tokens in the lanes of a zmm
// (avx512-q4-k-lanes.h, NOTE(q4-k-lanes)); else, and when their scratch cannot be allocated, the tiles above.
// Both give the reference's bits.
template <typename D>
void rows_q4_k(const void * w, size_t wb, const void * x, size_t xb, int64_t n_tok, int64_t n_in, int64_t r0, int64_t r1,
               float * y, int64_t ldy) {
    if constexpr (D::q4_k_lanes)
        if (n_tok >= D::q4_k_lanes_min_tokens && D::q4_k_lanes_rows(w, wb, x, xb, n_tok, n_in, r0, r1, y, ldy)) return;
    if (n_tok < k_q4_k_walk_min_tokens) few_tokens<q4_k_kernel, 4>(w, wb, x, xb, n_tok, n_in, r0, r1, y, ldy);
    else tile_walk<q4_k_kernel, 1, 4>(w, wb, x, xb, n_tok, n_in, r0, r1, y, ldy);
}

// Q6_K: up to 4 tokens go through spread sets of 2 rows (two streams per core), more tokens the tile walk. One
// matmul from memory on one thread, AMD EPYC, avx512: 1536 -> 151936, 1 to 4 tokens, 9.4-19 ms one row at a
// time, 7.9-14.5 ms in sets of 2 (sets of 4: as fast for 1 token, 15-20 % slower for 3 and 4); 8960 -> 20480,
// within +-10 % either way. Rows longer than k_q6_k_one_row_x's width took one row at a time until the Xeon
// (Sapphire Rapids), where sets of 2 lifted Qwen2.5-Coder-1.5B Q4_K_M's decode (its 8960-wide Q6_K ffn_down)
// from ~19.4 to ~20.2 tok/s (avx512+amx) and ~17.5 to ~18.5 (avx2), through Engine, 2 threads, interleaved.
constexpr int k_q6_k_set_rows = 2;

void walk_q6_k(const void * w, size_t wb, const void * x, size_t xb, int64_t n_tok, int64_t n_in, int64_t r0, int64_t r1,
               float * y, int64_t ldy) {
    const bool short_rows = 4 * xb <= k_q6_k_one_row_x;
    if (n_tok <= 4) few_tokens<q6_k_set_kernel, k_q6_k_set_rows>(w, wb, x, xb, n_tok, n_in, r0, r1, y, ldy);
    else if (short_rows) tile_walk<q6_k_kernel, 1, 1>(w, wb, x, xb, n_tok, n_in, r0, r1, y, ldy);
    else tile_walk<q6_k_kernel, 1, 4>(w, wb, x, xb, n_tok, n_in, r0, r1, y, ldy);
}

// Q4_K rows repacked 16 at a time at load (quant/q4-k-x16.h), as x16_walk takes them: tile<T, NextGroup> computes
// a group's 16 rows (in vectors of X::rows, X = int_dots::x16) x T tokens (token t at x + t * xb): y[t * ldy + r].
// Every vector of rows takes its part of each super-block in turn, so the group's bytes are read once, in order
// (on AVX2 two passes over a group, one per 8 rows, streamed 1536-wide rows from memory at three quarters of the
// GGUF layout's rate).
// first: the chunk of tokens reads the group from memory (the first chunk of a block of tokens: the walk's later
// chunks find the panel in L2). NOTE(q4-k-x16-prefetch): with NextGroup, the next group's super-block is then asked
// into L2 as this one's is read (the next group's copy follows this one): a second stream, as the AMX tiles'
// NOTE(amx-prefetch). Qwen2.5-Coder-1.5B Q4_K_M decode on the Xeon (2 threads, interleaved runs): avx512 18.7 ->
// 19.4 tok/s, avx2 16.5 -> 17.0 (this group's own blocks ahead into L1 as well: no faster). On the AMD EPYC (Zen 4)
// the same prefetch made the avx512 GEMV of one token slower, the hardware's own prefetcher following the sequential
// read better alone: there kernels_for gives the level the
// walk that leaves one token to it (x16_walk's PrefetchFrom 2; the Q6_K tiles likewise, avx512-q6-k-x16.h). From 2
// tokens on the prefetch pays there too, as for the nibble formats' lanes (NOTE(x16-lanes-prefetch)):
// Qwen2.5-Coder-1.5B Q4_K_M through Engine, 2 threads, interleaved, 2 streams 47-49 -> 48-56 tok/s, 4 streams 64-72
// -> 76-87. In a prompt's cache blocks, which read a panel once per chunk, prefetching in every chunk cost 6 %; in
// the first chunk only it pays from 5 tokens on (before, only a single chunk prefetched): the scratch one-matmul
// program, 1536 -> 8960 Q4_K from memory, 2 threads, AMD EPYC, medians of 5 interleaved runs, 8 and 16 tokens avx2
// 80 -> 96 and 98 -> 103 G multiply-adds a second, avx512 125 -> 158 and 212 -> 261; 64 and 256 tokens within the
// noise. Past the range (a task's last group) a prefetch only costs a read.
struct q4_k_x16_tiles {
    using group = block_q4_k_x16;
    template <int T, bool NextGroup>
    static void tile(const group * w, int64_t nb, const char * x, size_t xb, float * y, int64_t ldy, bool first) {
        using X = int_dots::x16;
        using vi = typename X::vi;
        constexpr int H = k_x16_rows / X::rows;
        const block_q8_k * xr[T];
        for (int t = 0; t < T; ++t) xr[t] = reinterpret_cast<const block_q8_k *>(x + size_t(t) * xb);
        isa::f32 acc[H][T], macc[H][T];
        for (int h = 0; h < H; ++h)
            for (int t = 0; t < T; ++t) acc[h][t] = macc[h][t] = isa::zero();
        const block_q4_k_x16 * next = w + nb;
        for (int64_t b = 0; b < nb; ++b) {
            if (NextGroup && first) prefetch_object<_MM_HINT_T1>(next + b);
            const block_q4_k_x16 & g = w[b];
            for (int h = 0; h < H; ++h) {
                const int r = h * X::rows;
                vi isum[T];
                for (int t = 0; t < T; ++t) isum[t] = X::zero();
                for (int c = 0; c < 4; ++c) {
                    // Sub-blocks 2c (the quads' low nibbles) and 2c + 1 (their high nibbles).
                    vi lo_dot[T], hi_dot[T];
                    for (int t = 0; t < T; ++t) lo_dot[t] = hi_dot[t] = X::zero();
                    for (int k = 0; k < 8; ++k) {
                        const vi q = X::quads(g.qs[8 * c + k][r]);
                        const vi lo = X::low4(q), hi = X::high4(q);
                        for (int t = 0; t < T; ++t) {
                            int32_t xl, xh;
                            std::memcpy(&xl, xr[t][b].qs + 64 * c + 4 * k, 4);
                            std::memcpy(&xh, xr[t][b].qs + 64 * c + 32 + 4 * k, 4);
                            lo_dot[t] = X::dot4(lo_dot[t], lo, xl);
                            hi_dot[t] = X::dot4(hi_dot[t], hi, xh);
                        }
                    }
                    for (int t = 0; t < T; ++t)
                        isum[t] = X::add(isum[t], X::add(X::scaled(lo_dot[t], g.sc[2 * c] + r), X::scaled(hi_dot[t], g.sc[2 * c + 1] + r)));
                }
                vi mins[4];
                for (int i = 0; i < 4; ++i) mins[i] = X::min_pairs(g.m[2 * i] + r, g.m[2 * i + 1] + r);
                const isa::f32 dw = isa::load_f16(g.d + r), dmin = isa::load_f16(g.dmin + r);
                for (int t = 0; t < T; ++t) {
                    // msum = sum_j m_j * xsum_j, xsum_j = bsums[2j] + bsums[2j + 1], two sub-blocks a step.
                    const int16_t * bs = xr[t][b].bsums;
                    vi msum = X::zero();
                    for (int i = 0; i < 4; ++i) {
                        const uint32_t xs = uint32_t(uint16_t(bs[4 * i] + bs[4 * i + 1])) | uint32_t(uint16_t(bs[4 * i + 2] + bs[4 * i + 3])) << 16;
                        msum = X::add_mins(msum, mins[i], int32_t(xs));
                    }
                    const isa::f32 dx = isa::set1(xr[t][b].d);
                    acc[h][t] = isa::fmadd(X::to_f32(isum[t]), isa::mul(dw, dx), acc[h][t]);
                    macc[h][t] = isa::fmadd(X::to_f32(msum), isa::mul(dmin, dx), macc[h][t]);
                }
            }
        }
        for (int h = 0; h < H; ++h)
            for (int t = 0; t < T; ++t) isa::store(y + t * ldy + h * X::rows, isa::sub(acc[h][t], macc[h][t]));
    }
};

// Rows repacked 16 at a time, [r0, r1) (multiples of 16) x tokens [0, n_tok), in Tiles' groups (Tiles::group, one
// per super-block) up to 4 tokens a tile (Tiles::tile<T, NextGroup>, the next group prefetched from PrefetchFrom
// tokens on: NOTE(q4-k-x16-prefetch)) (for Q4_K on AVX2 the registers spill, but each unpacked quad then
// serves 4 tokens: 1536 -> 8960 x 16 tokens, one pass per 8 rows, 3.3 ms in tiles of 2 against 2.9 in tiles of
// 4), in tiling.h's cache blocks (NOTE(tiling)): every chunk of a block of tokens walks a panel of groups while
// the panel stays in L2 (one chunk: the range streamed once).
template <typename Tiles, int PrefetchFrom>
void x16_walk(const void * w, size_t wb, const void * x, size_t xb, int64_t n_tok, int64_t n_in, int64_t r0, int64_t r1, float * y,
              int64_t ldy) {
    using group = typename Tiles::group;
    using tile_fn = void (*)(const group *, int64_t, const char *, size_t, float *, int64_t, bool);
    static constexpr tile_fn by_count[5] = {nullptr, Tiles::template tile<1, (1 >= PrefetchFrom)>, Tiles::template tile<2, (2 >= PrefetchFrom)>,
                                            Tiles::template tile<3, (3 >= PrefetchFrom)>, Tiles::template tile<4, (4 >= PrefetchFrom)>};
    const int64_t nb = n_in / quant::qk_k;
    const char * wc = static_cast<const char *>(w);
    const char * xc = static_cast<const char *>(x);
    cache_blocks(wb, xb, n_tok, r0, r1, k_x16_rows, [&](int64_t t0, int64_t t1, int64_t p0, int64_t p1) {
        for (int64_t t = t0; t < t1; t += 4) {
            const int n = int(t1 - t < 4 ? t1 - t : 4);
            for (int64_t r = p0; r < p1; r += k_x16_rows)
                by_count[n](reinterpret_cast<const group *>(wc + size_t(r) * wb), nb, xc + size_t(t) * xb, xb, y + t * ldy + r, ldy, t == t0);
        }
    });
}

} // namespace

TM_MATMUL_ROWS_ENTRY(matmul_q4_k, rows_q4_k<int_dots>)
TM_MATMUL_ROWS_ENTRY(matmul_q4_k_x16, x16_walk<q4_k_x16_tiles, 1>)
TM_MATMUL_ROWS_ENTRY(matmul_q5_k, tile_walk<q5_k_kernel, 1, 2>)
TM_MATMUL_ROWS_ENTRY(matmul_q6_k, walk_q6_k)
#if defined(TM_KERNELS_AVX512_X16)
TM_MATMUL_ROWS_ENTRY(matmul_q6_k_x16, x16_walk<int_dots::q6_k_x16_tiles, 1>)
TM_MATMUL_ROWS_ENTRY(matmul_q6_k_x16_hw_stream, x16_walk<int_dots::q6_k_x16_tiles, 2>)
TM_MATMUL_ROWS_ENTRY(matmul_q4_k_x16_hw_stream, x16_walk<q4_k_x16_tiles, 2>)
#endif

} // namespace tmill::kernels::TM_KERNELS_LEVEL
