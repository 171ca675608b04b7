// The avx512 level's matmuls for the weight types whose blocks are 32 int8 weights against Q8_0 activations
// (Q8_0, Q4_0, IQ4_NL, Q5_0), and the one-token kernel of those against Q8_1 (Q4_1, Q5_1: avx512-block-step-min.h
// gives their prompt tile and format), with the block-step numerics of kernels/block-step/step.h — per (row, token) an
// exact int32 dot c_b per block, then acc = fma(d_w * d_x, float(c_b), acc) in block order from 0 — the
// bits the AMX tiles and the scalar reference kernels/ref/matmul-q8-block-step.cpp give (docs/kernels.md,
// "Matrix products"). Included by avx512-int-dots.h only (AVX-512 + VNNI), internal linkage as tiling.h.
//
// NOTE(block-step-avx512): why these numerics on AVX-512. llama.cpp's Q8_0 order (NOTE(q8-matmul)) spends one
// 8-lane FMA and one convert per 32 multiply-adds, and on Zen 4 those issue on the same two pipes as vpdpbusd,
// which bound the old prompt tile. Here the lanes are 16 tokens, so the float work per (row, block) is one
// convert, one multiply (d_w * d_x) and one FMA per 16 tokens, against 8 vpdpbusd:
//  - several tokens (from k_decode_max_tokens + 1 on): the activations of each 16-token group repacked once
//    per call (in passes of k_pass_groups groups) in the VNNI layout of kernels/block-step/vnni-pack.h as x + 128 (vpdpbusd's unsigned operand);
//    each weight quad a broadcast signed operand; the int32 accumulator starts at -128 * sum(w_b), which, with
//    the panel's F32 weight scales, is computed once per call for a panel of rows (whose blocks the nibble
//    formats decode to int8 there too) and reused by every token group. A group of at most 8 tokens takes
//    ymm lanes instead of zmm;
//  - one token (decode), or a call of at most k_decode_max_tokens: each row streamed on its own (adjacent
//    rows interleaved halve the read rate on the EPYC; one token pairs rows half a task apart instead), once
//    for all the call's tokens: per block
//    and token one vpdpbusd of w + 128 (unsigned) against the signed x, the 8 lane vectors of 8 blocks
//    reduced to their 8 block dots at once, minus 128 * sum(x_b) (once per call and token), then the 8 scalar
//    steps.
// Both compute every (row, token) element with the same operations, so a result never depends on the token
// count, the row range or the threads (batch invariance), and equals the reference's bit for bit.
#pragma once

#include "kernels/block-step/reference.h"
#include "kernels/hsum.h"
#include "kernels/simd/avx512-token-lanes.h"
#include "kernels/simd/int8-weights.h"
#include "quant/q8-1.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

namespace tmill::kernels {
namespace {
namespace block_step_avx512 {

using namespace avx512_vnni;

// -128 * the sum of each of 8 blocks' 32 signed bytes (exact; lane i for q[i]): the vpdpbusd correction of
// both kernels (weights in prompt panels, the token's activations in decode), one vpdpbusd against ones per
// block, the 8 reduced together.
inline __m256i corrections8(const __m256i * q) {
    const __m256i ones = _mm256_set1_epi8(1);
    __m256i v[8];
    for (int i = 0; i < 8; ++i) v[i] = _mm256_dpbusd_epi32(_mm256_setzero_si256(), ones, q[i]);
    return _mm256_mullo_epi32(sums8(v), _mm256_set1_epi32(-128));
}

// ---- Prompts: 16 tokens per zmm (8 per ymm for a group of at most 8) ----

// Per (row, block) of a panel: the int32 accumulator's start -128 * sum(w_b) and the F32 weight scale.
struct panel_entry {
    int32_t corr;
    float dw;
};

// R rows x the group's tokens in L's lanes, the prompt tile of format F (this header's, or a format with a minimum
// of avx512-block-step-min.h): out[r * 16 + t]. Row r's int8 block b at q + r * rs + b * bs; its panel entries at
// meta + r * nb; pack: the group's repacked activations, F::pack_block bytes a block, their F32 scales after the
// quads (L reads the first lanes of each row), with a minimum their sums at F::sx_at. pf_lines cache lines from
// pf on are prefetched to L2 per block (the next panel's weights, prompt_rows). Per (row, block) 8 vpdpbusd: the
// activations x + 128 (unsigned) against the row's signed weight quad, started at the entry's -128 * sum(w)
// correction — or, with a minimum, the row's unsigned levels against the signed x, from 0 — then the block step
// (and the minimum's FMA).
template <typename F, typename L, int R>
void tile(const int8_t * q, size_t rs, size_t bs, const typename F::entry * meta, int64_t nb, const uint8_t * pack, float * out,
          const char * pf, int pf_lines) {
    typename L::f32 acc[R];
    for (auto & a : acc) a = L::zero();
    for (int64_t b = 0; b < nb; ++b) {
        token_lanes_avx512::prefetch_panel_lines(pf, b, pf_lines);
        const uint8_t * xp = pack + size_t(b) * F::pack_block;
        typename L::vi xv[k_pack_quads];
        token_lanes_avx512::load_quad_rows<L>(xp, xv);
        const typename L::f32 dx = L::load(reinterpret_cast<const float *>(xp + k_pack_quad_bytes));
        typename L::f32 sx = L::zero();
        if constexpr (F::has_min) sx = L::load(reinterpret_cast<const float *>(xp + F::sx_at));
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) {
            const int8_t * wq = q + size_t(r) * rs + size_t(b) * bs;
            const typename F::entry & e = meta[r * nb + b];
            // Two chains of vpdpbusd (the integer sum is exact, so its order is free): half the latency
            // each row's convert and FMA wait for.
            typename L::vi c[2] = {L::set1_i(0), L::set1_i(0)};
            if constexpr (!F::has_min) c[0] = L::set1_i(e.corr);
            for (int k = 0; k < k_pack_quads; ++k) {
                int32_t quad;
                std::memcpy(&quad, wq + 4 * k, 4);
                c[k & 1] = F::has_min ? L::dpbusd(c[k & 1], L::set1_i(quad), xv[k]) : L::dpbusd(c[k & 1], xv[k], L::set1_i(quad));
            }
            acc[r] = L::fmadd(L::mul(L::set1(e.dw), dx), L::to_f32(L::add_i(c[0], c[1])), acc[r]);
            if constexpr (F::has_min) acc[r] = L::fmadd(L::set1(e.m), sx, acc[r]);
        }
    }
    for (int r = 0; r < R; ++r) L::store(out + 16 * r, acc[r]);
}

// The panel entries of n <= 8 consecutive blocks (Full: n == 8, the common case, without the per-block tests):
// their corrections8 (zero blocks past n) and their F16 scales converted in one register, stored as
// interleaved entries; unless F::in_place, the blocks' int8 weights to dst too.
template <typename F, bool Full>
__attribute__((always_inline)) inline void panel_group(const typename F::block * blk, int n, panel_entry * e, int8_t * dst) {
    static_assert(sizeof(panel_entry) == 8, "entries are stored as interleaved int32/F32 lanes");
    __m256i q[8];
    __m128i d = _mm_setzero_si128();
#pragma GCC unroll 8
    for (int i = 0; i < 8; ++i) {
        const bool in = Full || i < n;
        q[i] = in ? F::values(blk[i]) : _mm256_setzero_si256();
        if (in) d = _mm_insert_epi16(d, blk[i].d, i);
        if constexpr (!F::in_place)
            if (in) _mm256_storeu_si256(reinterpret_cast<__m256i *>(dst + size_t(i) * quant::qk8_0), q[i]);
    }
    const __m256 corr = _mm256_castsi256_ps(corrections8(q));
    const __m256 dw = _mm256_cvtph_ps(d);
    const __m256 lo = _mm256_unpacklo_ps(corr, dw);   // entries 0, 1 | 4, 5
    const __m256 hi = _mm256_unpackhi_ps(corr, dw);   // entries 2, 3 | 6, 7
    alignas(32) panel_entry group[8];
    panel_entry * out = Full ? e : group;
    _mm256_storeu_ps(reinterpret_cast<float *>(out), _mm256_permute2f128_ps(lo, hi, 0x20));
    _mm256_storeu_ps(reinterpret_cast<float *>(out + 4), _mm256_permute2f128_ps(lo, hi, 0x31));
    if (!Full) std::memcpy(e, group, size_t(n) * sizeof(panel_entry));
}

// The panel entries of rows w .. w + rows - 1 (and, unless F::in_place, their int8 weights, nb * 32 bytes
// per row), 8 blocks at a time (one block at a time, the reductions and conversions were about a tenth of a
// 512-token prefill).
template <typename F>
void prepare_panel(const char * w, size_t wb, int64_t rows, int64_t nb, panel_entry * meta, int8_t * staging) {
    for (int64_t r = 0; r < rows; ++r) {
        const auto * blk = reinterpret_cast<const typename F::block *>(w + size_t(r) * wb);
        panel_entry * e = meta + r * nb;
        auto dst_at = [&](int64_t b) -> int8_t * { return F::in_place ? nullptr : staging + size_t(r * nb + b) * quant::qk8_0; };
        int64_t b = 0;
        for (; b + 8 <= nb; b += 8) panel_group<F, true>(blk + b, 8, e + b, dst_at(b));
        if (b < nb) panel_group<F, false>(blk + b, int(nb - b), e + b, dst_at(b));
    }
}

// A weight type: its block, its reference (the same bits; run when scratch cannot be allocated) and whether
// the prompt tile reads its int8 weights in place (Q8_0) or from the panel's decoded copy; the members
// token_lanes_avx512::prompt_rows takes.
template <typename Block, matmul_rows_kernel * Reference, bool InPlace>
struct format {
    using block = Block;
    using act = quant::block_q8_0;
    static constexpr bool has_min = false;
    using entry = panel_entry;
    static constexpr matmul_rows_kernel * reference = Reference;
    static constexpr bool in_place = InPlace;
    static constexpr size_t staging_bytes = quant::qk8_0;
    static constexpr size_t pack_block = k_pack_block;
    static constexpr int tile_rows = 8;   // rows sharing each activation load: 8 + 8 + 8 of the 32 zmm registers
    static constexpr int panel_unit = tile_rows;
    static __m256i values(const Block & b) { return int8_weights<Block>::values(b); }
    static void pack(const char * x, size_t xb, int n, int64_t nb, uint8_t * dst) { pack_tokens(x, xb, n, nb, dst); }
    static void prepare_panel(const char * w, size_t wb, int64_t rows, int64_t nb, panel_entry * meta, int8_t * staging) {
        block_step_avx512::prepare_panel<format>(w, wb, rows, nb, meta, staging);
    }
    template <typename L, int R>
    static void tile(const int8_t * q, size_t rs, size_t bs, const panel_entry * meta, int64_t nb, const uint8_t * pack,
                     float * out, const char * pf, int pf_lines) {
        block_step_avx512::tile<format, L, R>(q, rs, bs, meta, nb, pack, out, pf, pf_lines);
    }
};
using q8_0 = format<quant::block_q8_0, block_step_ref::matmul_q8_0, true>;
using q4_0 = format<quant::block_q4_0, block_step_ref::matmul_q4_0, false>;
using iq4_nl = format<quant::block_iq4_nl, block_step_ref::matmul_iq4_nl, false>;
using q5_0 = format<quant::block_q5_0, block_step_ref::matmul_q5_0, false>;
template <typename Block>
struct format_of;
template <>
struct format_of<quant::block_q8_0> { using type = q8_0; };
template <>
struct format_of<quant::block_q4_0> { using type = q4_0; };
template <>
struct format_of<quant::block_iq4_nl> { using type = iq4_nl; };
template <>
struct format_of<quant::block_q5_0> { using type = q5_0; };

// ---- 1 to k_decode_max_tokens tokens: each row streamed on its own ----

// A token's blocks prepared once per call, 8 blocks a group in one contiguous record (so the row loop reads
// one activation stream beside the weights; separate arrays for the sums and scales measured slower):
// the 8 blocks' int8 values, -128 * sum(x_b), the F32 scale d_x and, against Q8_1, the F32 sum s_x (zero past
// the row's blocks, and for Q8_0).
struct alignas(32) x_group {
    int8_t qs[8][quant::qk8_0];
    int32_t corr[8];
    float dx[8];
    float sx[8];
};

// Blocks 0 .. N - 1 (N <= 8) of a row's 8-block group against T tokens' groups x[t]: lane i of dots[t] the
// exact block dot c_i as float, lane i of scales[t] d_w * d_x rounded to float, and for a format with a minimum
// lane i of mins its m_w (lanes >= N zero). Per block one vpdpbusd of w + 128 (unsigned) against each token's
// signed x, the weights loaded and offset once for the T tokens; a group's -128 * sum(x) corrects its 8 sums
// at once. A format with a minimum takes its unsigned levels as they are, with nothing to correct.
template <typename F, int N, int T>
__attribute__((always_inline)) inline void block_dots(const typename F::block * w, const x_group * const * x, __m256 * dots,
                                                      __m256 * scales, __m256 & mins) {
    const __m256i bias = _mm256_set1_epi8(char(0x80));
    __m256i wu[8];
    // The F16 scales gathered lane by lane in a register (narrow stores then one wide load would stall on
    // store forwarding).
    __m128i dw = _mm_setzero_si128(), mw = _mm_setzero_si128();
    for (int i = 0; i < N; ++i) {
        // A format with a minimum has unsigned levels (0..31): they are vpdpbusd's unsigned operand as they are.
        wu[i] = F::has_min ? F::values(w[i]) : _mm256_xor_si256(F::values(w[i]), bias);
        dw = _mm_insert_epi16(dw, w[i].d, i & 7);
        if constexpr (F::has_min) mw = _mm_insert_epi16(mw, w[i].m, i & 7);
    }
    const __m256 dwf = _mm256_cvtph_ps(dw);
    mins = F::has_min ? _mm256_cvtph_ps(mw) : _mm256_setzero_ps();
    for (int t = 0; t < T; ++t) {
        __m256i v[8];
        for (int i = 0; i < 8; ++i)
            v[i] = i < N ? _mm256_dpbusd_epi32(_mm256_setzero_si256(), wu[i < N ? i : 0],
                                               _mm256_load_si256(reinterpret_cast<const __m256i *>(x[t]->qs[i])))
                         : _mm256_setzero_si256();
        const __m256i sums = sums8(v);
        dots[t] = _mm256_cvtepi32_ps(F::has_min ? sums : _mm256_add_epi32(sums, _mm256_load_si256(reinterpret_cast<const __m256i *>(x[t]->corr))));
        scales[t] = _mm256_mul_ps(dwf, _mm256_load_ps(x[t]->dx));
    }
}

// Lane I of v in the low lane of an xmm.
template <int I>
__attribute__((always_inline)) inline __m128 lane(__m256 v) {
    const __m128 half = I < 4 ? _mm256_castps256_ps128(v) : _mm256_extractf128_ps(v, 1);
    return I % 4 == 0 ? half : _mm_permute_ps(half, I % 4);
}

// Step I (lane I: block I's scale product and dot, and with Min its minimum m_w and the token's s_x) applied to
// acc: block_step, then with Min block_step_min's second fma.
template <int I, bool Min>
__attribute__((always_inline)) inline __m128 step(__m256 scales, __m256 dots, __m256 mins, __m256 sx, __m128 acc) {
    acc = _mm_fmadd_ss(lane<I>(scales), lane<I>(dots), acc);
    if constexpr (Min) acc = _mm_fmadd_ss(lane<I>(mins), lane<I>(sx), acc);
    return acc;
}

// The first N of 8 steps applied to acc in lane order.
template <int N, bool Min>
__attribute__((always_inline)) inline __m128 steps(__m256 scales, __m256 dots, __m256 mins, __m256 sx, __m128 acc) {
    if (N > 0) acc = step<0, Min>(scales, dots, mins, sx, acc);
    if (N > 1) acc = step<1, Min>(scales, dots, mins, sx, acc);
    if (N > 2) acc = step<2, Min>(scales, dots, mins, sx, acc);
    if (N > 3) acc = step<3, Min>(scales, dots, mins, sx, acc);
    if (N > 4) acc = step<4, Min>(scales, dots, mins, sx, acc);
    if (N > 5) acc = step<5, Min>(scales, dots, mins, sx, acc);
    if (N > 6) acc = step<6, Min>(scales, dots, mins, sx, acc);
    if (N > 7) acc = step<7, Min>(scales, dots, mins, sx, acc);
    return acc;
}

// The sums s_x of a token's group, for a format with a minimum (nothing to load otherwise).
template <typename F>
__attribute__((always_inline)) inline __m256 group_sums(const x_group * x) {
    if constexpr (F::has_min) return _mm256_load_ps(x->sx);
    return _mm256_setzero_ps();
}

// One group of N <= 8 blocks (the first at block 8g) of R rows (w[i]: row i) against T tokens' groups x[t]: the
// rows' dots and scales first, then their steps, so the R rows' chains overlap.
template <typename F, int T, int R, int N>
__attribute__((always_inline)) inline void group_steps(const typename F::block * const * w, int64_t g, const x_group * const * x,
                                                       __m128 (&acc)[R][T]) {
    __m256 dots[R][T], scales[R][T], mins[R];
    for (int i = 0; i < R; ++i) block_dots<F, N, T>(w[i] + 8 * g, x, dots[i], scales[i], mins[i]);
    for (int i = 0; i < R; ++i)
        for (int t = 0; t < T; ++t) acc[i][t] = steps<N, F::has_min>(scales[i][t], dots[i][t], mins[i], group_sums<F>(x[t]), acc[i][t]);
}

// group_steps for the last, partial group of R rows (nb % 8 = N blocks, 1 <= N <= 7), indexed by N.
template <typename F, int T, int R>
struct tails {
    using fn = void (*)(const typename F::block * const *, int64_t, const x_group * const *, __m128 (&)[R][T]);
    static constexpr fn group[8] = {nullptr,                 group_steps<F, T, R, 1>, group_steps<F, T, R, 2>, group_steps<F, T, R, 3>,
                                    group_steps<F, T, R, 4>, group_steps<F, T, R, 5>, group_steps<F, T, R, 6>, group_steps<F, T, R, 7>};
};

// R rows (w[i]: row i) against T tokens (x[t]: token t's groups): per group the dots and scales, then the
// steps in block order, scalar, one chain per (row, token); each row's weights are read once for the T
// tokens. Row i's result for token t goes to out[i + t * ldo]. With one token a row's chain (one FMA per
// block, 4 cycles each; two with a minimum) holds a core back, so decode runs rows together (k_decode_streams):
// their chains overlap (two rows: from L2 ~10 % faster), while the order within each row stays the same — the
// last, partial group's too. (Running 8 rows' steps together in 8 lanes, from the rows' dots and scales stored
// to a small buffer and transposed, was ~10 % slower with the weights coming from memory, though faster from
// L2: the stores cost more than the lane moves they save.)
template <typename F, int T, int R>
void row_dots(const typename F::block * const * w, const x_group * const * x, int64_t nb, float * out, int64_t ldo) {
    __m128 acc[R][T];
    for (auto & row : acc)
        for (auto & a : row) a = _mm_setzero_ps();
    const int64_t groups = nb / 8;
    const x_group * xg[T];
    for (int64_t g = 0; g < groups; ++g) {
        for (int t = 0; t < T; ++t) xg[t] = x[t] + g;
        group_steps<F, T, R, 8>(w, g, xg, acc);
    }
    if (const int rest = int(nb % 8)) {
        for (int t = 0; t < T; ++t) xg[t] = x[t] + groups;
        tails<F, T, R>::group[rest](w, groups, xg, acc);
    }
    for (int i = 0; i < R; ++i)
        for (int t = 0; t < T; ++t) out[i + t * ldo] = _mm_cvtss_f32(acc[i][t]);
}

// Up to this many tokens take the row-streaming kernel (row_dots), each row's weights read once for all of
// them; from 5 on, the prompt tile. Measured on the EPYC, N concurrent streams through Engine (TinyLlama-shape
// Q8_0, 2 threads): sharing the row's loads made 2, 3 and 4 streams 27 %, 18 % and 18 % faster than one
// token at a time (2, 3) or the 8-lane prompt tile (4); at 5, 6 and 8 streams the prompt tile is faster
// (6 streams: 58 against 68 tok/s).
constexpr int64_t k_decode_max_tokens = 4;

// One token's blocks (Q8_0 or Q8_1) as x_groups (groups of 8; blocks past nb zero).
template <typename A>
void prepare_token(const A * xb, int64_t nb, x_group * xg) {
    for (int64_t gi = 0; gi < (nb + 7) / 8; ++gi) {
        x_group & g = xg[gi];
        __m256i q[8];
        for (int i = 0; i < 8; ++i) {
            const int64_t b = gi * 8 + i;
            q[i] = b < nb ? _mm256_loadu_si256(reinterpret_cast<const __m256i *>(xb[b].qs)) : _mm256_setzero_si256();
            _mm256_store_si256(reinterpret_cast<__m256i *>(g.qs[i]), q[i]);
            g.dx[i] = b < nb ? _cvtsh_ss(xb[b].d) : 0.0f;
            if constexpr (std::is_same_v<A, quant::block_q8_1>) g.sx[i] = b < nb ? _cvtsh_ss(xb[b].s) : 0.0f;
            else g.sx[i] = 0.0f;
        }
        _mm256_store_si256(reinterpret_cast<__m256i *>(g.corr), corrections8(q));
    }
}

// The rows one token's row_dots runs together, each from its own part of the range: 2 (one FMA chain per
// block), 4 for a format with a minimum (two dependent FMAs per block).
template <typename F>
constexpr int k_decode_streams = F::has_min ? 4 : 2;

// row_dots<F, T, 1> for T = 1 .. k_decode_max_tokens, indexed by T.
template <typename F, int... T>
constexpr auto row_dots_for(std::integer_sequence<int, T...>) {
    using fn = void (*)(const typename F::block * const *, const x_group * const *, int64_t, float *, int64_t);
    return std::array<fn, sizeof...(T)>{(T == 0 ? fn(nullptr) : row_dots<F, (T > 0 ? T : 1), 1>)...};
}

// Rows [r0, r1) x tokens [0, n_tok), n_tok <= k_decode_max_tokens, each row once against all the tokens
// (row_dots): false when the scratch buffer cannot be allocated. One token pairs row r with row r + h of the
// range's 2h rows: two streams half a range apart read at full rate, where adjacent rows halved it.
template <typename F>
bool decode_rows(const char * w, size_t wb, const char * x, size_t xb, int64_t n_tok, int64_t nb, int64_t r0, int64_t r1,
                 float * y, int64_t ldy) {
    const int64_t groups = (nb + 7) / 8;
    uint8_t * xbuf = scratch_space<0>(size_t(n_tok * groups) * sizeof(x_group) + 32);   // 32 bytes of slack to align it
    if (!xbuf) return false;
    auto * xg = reinterpret_cast<x_group *>((reinterpret_cast<uintptr_t>(xbuf) + 31) & ~uintptr_t(31));
    const x_group * tokens[k_decode_max_tokens];
    for (int64_t t = 0; t < n_tok; ++t) {
        prepare_token(reinterpret_cast<const typename F::act *>(x + size_t(t) * xb), nb, xg + t * groups);
        tokens[t] = xg + t * groups;
    }
    const auto row = [&](int64_t r) { return reinterpret_cast<const typename F::block *>(w + size_t(r) * wb); };
    int64_t r = r0;
    if (n_tok == 1) {
        constexpr int S = k_decode_streams<F>;
        const int64_t h = (r1 - r0) / S;
        for (; r < r0 + h; ++r) {
            const typename F::block * set[S];
            for (int i = 0; i < S; ++i) set[i] = row(r + i * h);
            float o[S];
            row_dots<F, 1, S>(set, tokens, nb, o, 1);
            for (int i = 0; i < S; ++i) y[r + i * h] = o[i];
        }
        r = r0 + S * h;
    }
    static constexpr auto by_count = row_dots_for<F>(std::make_integer_sequence<int, k_decode_max_tokens + 1>{});
    const auto dots = by_count[n_tok];
    for (; r < r1; ++r) {
        const typename F::block * one[1] = {row(r)};
        dots(one, tokens, nb, y + r, ldy);
    }
    return true;
}

// The matmul_rows_kernel of format F.
template <typename F>
void rows(const void * w, size_t wb, const void * x, size_t xb, int64_t n_tok, int64_t n_in, int64_t r0, int64_t r1,
          float * y, int64_t ldy) {
    if (n_tok <= 0 || r1 <= r0) return;
    const int64_t nb = n_in / quant::qk8_0;
    const char * wc = static_cast<const char *>(w);
    const char * xc = static_cast<const char *>(x);
    bool done = true;
    if (n_tok <= k_decode_max_tokens) {
        done = decode_rows<F>(wc, wb, xc, xb, n_tok, nb, r0, r1, y, ldy);
    } else {
        done = token_lanes_avx512::prompt_rows<F>(wc, wb, xc, xb, n_tok, nb, r0, r1, y, ldy);
    }
    if (!done) F::reference(w, wb, x, xb, n_tok, n_in, r0, r1, y, ldy);
}

} // namespace block_step_avx512
} // namespace
} // namespace tmill::kernels
