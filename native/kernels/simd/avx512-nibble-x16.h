// The avx512 level's kernels for the formats of 32-element blocks on rows repacked 16 at a time: the nibble formats
// Q4_1 (quant/q4-1-x16.h, against Q8_1), Q4_0 and IQ4_NL (quant/q4-0-x16.h) and Q5_0 (quant/q5-0-x16.h; against
// Q8_0), and Q8_0 (quant/q8-0-x16.h), with the block step (kernels/block-step/step.h): per (row, token) and block the
// exact int32 dot c_b of the block's weights with the activations, acc = fma(d_w * d_x, float(c_b), acc), and for
// Q4_1 then acc = fma(m_w, s_x, acc) — the bits of block_step_ref::matmul_q4_1, matmul_q4_0, matmul_iq4_nl,
// matmul_q5_0 and matmul_q8_0 on the original rows, whatever the kernel. Included by avx512-int-dots.h only (AVX-512 + VNNI), internal linkage as tiling.h.
//
// NOTE(nibble-x16): why. On the GGUF rows a token's block steps are scalar: per (row, block) a dpbusd's 8 lane sums
// reduced to one, the scale product (and the minimum) taken out of their lanes, one or two dependent FMAs — about
// 6 cycles per (row, block) for Q4_1 on the AMD EPYC (Zen 4), even with four rows' chains overlapped, so these
// formats' decode read their weights at about half the bandwidth (block_step_avx512::row_dots). Here a row is a
// lane: one 64-byte load holds the same quad of qs of the group's 16 rows, its low nibbles are elements 4k .. 4k + 3
// and its high nibbles 16 + 4k .. + 3, each one dpbusd of the unsigned levels (the nibble; IQ4_NL's table level +
// 128, one byte shuffle; Q5_0's nibble and fifth bit) against the token's quad (broadcast) with nothing to reduce;
// the levels' offset (8, 128, 16) is the chain's start, -offset * sum(x_b), once per call and token; the block's
// steps are 16-lane FMAs. Up to k_lanes_max_tokens (16) tokens share each unpacked block, with nothing prepared per
// row: no per-call panel of weights and entries, which the prompt tile needs and a batch of 16 tokens (16 streams)
// cannot spread over many token groups. More tokens keep the block step's 16-token prompt tile, its panel's int8
// weights and entries decoded from the groups (x16_format::prepare_panel) instead of from the rows.
// Q8_0 takes the same lanes (its bytes, sign bit flipped, the levels; offset 128) for 2 to 16 tokens, and one token a
// block pair at a time (lane_pairs). The trade, measured through Engine on the AMD EPYC (Zen 4), 2 threads, the
// synthetic TinyLlama-shape Q8_0 model against its GGUF rows: one stream 0.95-0.98 of the rows' rate; 4 streams
// ~1.7x, 8 streams ~1.35x, 16 streams ~1.15x (the lanes need no per-call panel).
#pragma once

#include "kernels/simd/avx512-block-step-min.h"
#include "quant/iq4-nl.h"
#include "quant/q4-0-x16.h"
#include "quant/q4-1-x16.h"
#include "quant/q5-0-x16.h"
#include "quant/q8-0-x16.h"
#include "quant/q8-0.h"
#include "quant/q8-1.h"

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace tmill::kernels {
namespace {
namespace nibble_x16_avx512 {

using quant::k_x16_rows;

// A layout L gives: group, block (the GGUF block), act (the activations' block), prompt (the block step's prompt
// format of the GGUF rows), has_min, scales_first (whether a block's scales precede its quads in memory), offset
// (what the levels exceed the weights by: the chain's start undoes it), line(g, b, k) (quad k of block b's 16 rows,
// from the group at g), d(g, b) and with has_min m(g, b) (their 16 F16 scales and minimums; Q4_1's, Q4_0's, IQ4_NL's
// and Q5_0's accessors are their quant layouts'), has_fifth and qh(g, b) (Q5_0: their 16 32-bit words of fifth bits;
// the others: nullptr), nibbles (whether a line of qs holds two quads of elements as nibbles, or one as bytes: Q8_0,
// whose line(g, b, k) then runs to k = 7), pair_scales (whether a group of two blocks holds both blocks' quads before
// their scales: Q8_0) and levels(v) (the unsigned levels of 64 nibbles, or bytes, before the fifth bits).
// layout_defaults holds what most of them share.
struct layout_defaults {
    static constexpr bool has_min = false;
    static constexpr bool scales_first = false;
    static constexpr bool has_fifth = false;
    static constexpr bool nibbles = true;
    static constexpr bool pair_scales = false;
    template <typename G>
    static const uint16_t * m(const G *, int64_t) { return nullptr; }
    template <typename G>
    static const uint8_t * qh(const G *, int64_t) { return nullptr; }
    static __m512i levels(__m512i n) { return n; }
};
struct q4_1_layout : layout_defaults, quant::q4_1_x16_access {
    using quant::q4_1_x16_access::m;
    using block = quant::block_q4_1;
    using act = quant::block_q8_1;
    using prompt = block_step_min_avx512::format<block, block_step_ref::matmul_q4_1_x16>;
    static constexpr bool has_min = true;
    static constexpr int32_t offset = 0;
};
// Q4_0: the weight n - 8 (kernels/simd/int8-weights.h), so the levels are the nibbles and the offset 8.
struct q4_0_layout : layout_defaults, quant::q4_0_x16_access {
    using block = quant::block_q4_0;
    using act = quant::block_q8_0;
    using prompt = block_step_avx512::format<block, block_step_ref::matmul_q4_0_x16, false>;
    static constexpr bool scales_first = true;
    static constexpr int32_t offset = 8;
};
// IQ4_NL: the table's level (-127 .. 113) + 128, unsigned, and the offset 128.
struct iq4_nl_layout : q4_0_layout {
    using block = quant::block_iq4_nl;
    using prompt = block_step_avx512::format<block, block_step_ref::matmul_iq4_nl_x16, false>;
    static constexpr int32_t offset = 128;
    static __m512i levels(__m512i n) {
        const __m512i table = _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i *>(quant::k_iq4nl_values)));
        return _mm512_xor_si512(_mm512_shuffle_epi8(table, n), _mm512_set1_epi8(char(0x80)));
    }
};
// Q5_0: the nibble and the fifth bit, the weight that minus 16.
struct q5_0_layout : layout_defaults, quant::q5_0_x16_access {
    using quant::q5_0_x16_access::qh;
    using block = quant::block_q5_0;
    using act = quant::block_q8_0;
    using prompt = block_step_avx512::format<block, block_step_ref::matmul_q5_0_x16, false>;
    static constexpr bool scales_first = true;
    static constexpr int32_t offset = 16;
    static constexpr bool has_fifth = true;
};
// Q8_0 (quant/q8-0-x16.h, the AMX tiles' layout): a line holds one quad of bytes of the 16 rows, a group's two blocks'
// quads come before their scales; the level is the signed weight + 128 (its sign bit flipped), the offset 128.
struct q8_0_layout : layout_defaults {
    using group = quant::block_q8_0_x16;
    using block = quant::block_q8_0;
    using act = quant::block_q8_0;
    using prompt = block_step_avx512::format<block, block_step_ref::matmul_q8_0_x16, false>;
    static constexpr int32_t offset = 128;
    static constexpr bool nibbles = false;
    static constexpr bool pair_scales = true;
    static const uint8_t * line(const group * g, int64_t b, int k) { return reinterpret_cast<const uint8_t *>(g[b / 2].qs[b % 2][k][0]); }
    static const uint16_t * d(const group * g, int64_t b) { return g[b / 2].d[b % 2]; }
    static __m512i levels(__m512i v) { return _mm512_xor_si512(v, _mm512_set1_epi8(char(0x80))); }
};

// The fifth bits of elements 4Q .. 4Q + 3 of each row (bits 4Q .. 4Q + 3 of its lane of qh) added to those
// elements' levels (lane r, bytes 0..3): byte Q / 2 of each lane spread to its 4 bytes, each tested for its bit.
template <int Q>
inline __m512i with_fifth_bits(__m512i levels, __m512i qh) {
    constexpr char byte = char(Q / 2), shift = char(4 * (Q % 2));
    const __m512i spread = _mm512_set4_epi32(0x01010101 * (12 + byte), 0x01010101 * (8 + byte), 0x01010101 * (4 + byte), 0x01010101 * byte);
    const __m512i bits = _mm512_set1_epi32(int32_t(0x08040201u << shift));
    const __mmask64 set = _mm512_test_epi8_mask(_mm512_shuffle_epi8(qh, spread), bits);
    return _mm512_mask_add_epi8(levels, set, levels, _mm512_set1_epi8(16));
}

// Block b's levels of the group at g, a row per int32 lane: lo[k] elements 4k .. 4k + 3, hi[k] 16 + 4k .. + 3
// (vpdpbusd's unsigned operand: the weights plus L::offset). Q5_0's fifth bits are read before the quads (the
// layout's order); Q8_0's bytes are the levels with their sign bit flipped.
template <typename L>
inline void unpack_block(const typename L::group * g, int64_t b, __m512i (&lo)[4], __m512i (&hi)[4]) {
    if constexpr (!L::nibbles) {
        for (int k = 0; k < 4; ++k) {
            lo[k] = L::levels(_mm512_loadu_si512(L::line(g, b, k)));
            hi[k] = L::levels(_mm512_loadu_si512(L::line(g, b, 4 + k)));
        }
        return;
    }
    const __m512i low4 = _mm512_set1_epi8(0x0f);
    __m512i qh = _mm512_setzero_si512();
    if constexpr (L::has_fifth) qh = _mm512_loadu_si512(L::qh(g, b));
    for (int k = 0; k < 4; ++k) {
        const __m512i q = _mm512_loadu_si512(L::line(g, b, k));
        lo[k] = L::levels(_mm512_and_si512(q, low4));
        hi[k] = L::levels(_mm512_and_si512(_mm512_srli_epi16(q, 4), low4));
    }
    if constexpr (L::has_fifth) {
        lo[0] = with_fifth_bits<0>(lo[0], qh);
        lo[1] = with_fifth_bits<1>(lo[1], qh);
        lo[2] = with_fifth_bits<2>(lo[2], qh);
        lo[3] = with_fifth_bits<3>(lo[3], qh);
        hi[0] = with_fifth_bits<4>(hi[0], qh);
        hi[1] = with_fifth_bits<5>(hi[1], qh);
        hi[2] = with_fifth_bits<6>(hi[2], qh);
        hi[3] = with_fifth_bits<7>(hi[3], qh);
    }
}

// Per (token, block), prepared once per call: d_x, s_x (Q8_1; zero against Q8_0) and -offset * sum(x_b).
struct alignas(16) token_block {
    float dx, sx;
    int32_t start;
    int32_t pad;
};

template <typename L>
void prepare_token(const typename L::act * x, int64_t nb, token_block * out) {
    const __m256i ones = _mm256_set1_epi8(1);
    for (int64_t b = 0; b < nb; ++b) {
        int32_t sum = 0;   // only a start to undo an offset needs it (not Q4_1's)
        if constexpr (L::offset != 0) {
            const __m256i lanes = _mm256_dpbusd_epi32(_mm256_setzero_si256(), ones, _mm256_loadu_si256(reinterpret_cast<const __m256i *>(x[b].qs)));
            const __m128i four = _mm_add_epi32(_mm256_castsi256_si128(lanes), _mm256_extracti128_si256(lanes, 1));
            const __m128i two = _mm_add_epi32(four, _mm_unpackhi_epi64(four, four));
            sum = _mm_cvtsi128_si32(_mm_add_epi32(two, _mm_shuffle_epi32(two, 1)));
        }
        float sx = 0.0f;
        if constexpr (L::has_min) sx = _cvtsh_ss(x[b].s);
        out[b] = {_cvtsh_ss(x[b].d), sx, -L::offset * sum, 0};
    }
}

// Up to this many tokens take the lanes (each group read once for all of them), more the prompt tile. NOTE(x16-lanes-
// prefetch): from k_lanes_prefetch_tokens tokens on, each group's blocks also ask the next group of the range into L2
// (a second stream per core, as NOTE(amx-prefetch)); one token leaves the stream to the hardware prefetcher, as the
// Q4_K GEMV does on Zen 4 (NOTE(q4-k-x16-prefetch)). AMD EPYC (Zen 4), through Engine, 2 threads, interleaved against
// lanes of at most 8 tokens without the prefetch (the prompt tile from 9): synthetic TinyLlama-shape Q4_0, 4 streams
// 92-103 -> 134-136 tok/s, 16 streams 132-143 -> 164-186; Q4_1, 8 streams 95-107 -> 139-153, 16 streams 130-143 ->
// 155-172; one token unchanged. (Q4_1 from L2, ns per (row, block, token): the lanes 0.33 at 1 token, 0.25 at 2,
// 0.21 at 4 to 8; the prompt tile 0.37-0.8 at 5 to 8, 0.27 at 16. Without the prefetch, lanes in passes of 8
// tokens read from memory were no faster than the prompt tile at 12 tokens and slower at 16.)
constexpr int64_t k_lanes_max_tokens = 16;
constexpr int64_t k_lanes_prefetch_tokens = 2;

// Block b's share of the group at next (share bytes a block: a group is 16 rows of equal blocks) asked into L2, so the
// group's blocks ask for each of its lines about once, as this group's are read.
inline void prefetch_share(const char * next, size_t share, int64_t b) {
    const size_t first = size_t(b) * share / 64, end = (size_t(b + 1) * share + 63) / 64;
    for (size_t l = first; l < end; ++l) _mm_prefetch(next + 64 * l, _MM_HINT_T1);
}

// One token's exact block dots c_b, a row per lane: the levels lo, hi (unpack_block) against the token's 32 bytes xq,
// from the chain's start (-offset * sum(x_b)); the low and the high quads in two chains (the integer sum is exact,
// so its order is free).
inline __m512i block_dots(const __m512i (&lo)[4], const __m512i (&hi)[4], const int8_t * xq, int32_t start) {
    __m512i c[2] = {_mm512_set1_epi32(start), _mm512_setzero_si512()};
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k) {
        int32_t xl, xh;
        std::memcpy(&xl, xq + 4 * k, 4);
        std::memcpy(&xh, xq + quant::qk8_0 / 2 + 4 * k, 4);
        c[0] = _mm512_dpbusd_epi32(c[0], lo[k], _mm512_set1_epi32(xl));
        c[1] = _mm512_dpbusd_epi32(c[1], hi[k], _mm512_set1_epi32(xh));
    }
    return _mm512_add_epi32(c[0], c[1]);
}

// A group's 16 rows x T tokens (token t at x + t * xb, its prepared blocks at tb[t]; T <= k_lanes_max_tokens):
// y[t * ldy + r]. The group's blocks are read once, in order; each block's unpacked levels serve the T tokens. With
// next (not null), the next group is asked into L2 a block's share (share bytes) at a time.
template <typename L, int T>
void lanes(const typename L::group * w, int64_t nb, const char * x, size_t xb, const token_block * const * tb, float * y, int64_t ldy,
           const char * next, size_t share) {
    const typename L::act * xr[T];
    for (int t = 0; t < T; ++t) xr[t] = reinterpret_cast<const typename L::act *>(x + size_t(t) * xb);
    __m512 acc[T];
    for (int t = 0; t < T; ++t) acc[t] = _mm512_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
        if (next) prefetch_share(next, share, b);
        __m512 dw = _mm512_setzero_ps(), mw = _mm512_setzero_ps();
        // The loads in the layout's order (L::scales_first), so that the group's lines are first read in order.
        const auto scales = [&] {
            dw = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(L::d(w, b))));
            if constexpr (L::has_min) mw = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(L::m(w, b))));
        };
        if constexpr (L::scales_first) scales();
        __m512i lo[4], hi[4];
        unpack_block<L>(w, b, lo, hi);
        if constexpr (!L::scales_first) scales();
        // Unrolled so the accumulators stay in registers (16 of them beside the 8 levels at 16 tokens).
#pragma GCC unroll 16
        for (int t = 0; t < T; ++t) {
            const token_block & p = tb[t][b];
            const __m512i c = block_dots(lo, hi, xr[t][b].qs, p.start);
            acc[t] = _mm512_fmadd_ps(_mm512_mul_ps(dw, _mm512_set1_ps(p.dx)), _mm512_cvtepi32_ps(c), acc[t]);
            if constexpr (L::has_min) acc[t] = _mm512_fmadd_ps(mw, _mm512_set1_ps(p.sx), acc[t]);
        }
    }
    for (int t = 0; t < T; ++t) _mm512_storeu_ps(y + t * ldy, acc[t]);
}

// lanes<L, 1> for a layout with L::pair_scales (nb even): a pair's two blocks' dots first, then their scales and
// steps (block order kept), so one token reads each group's lines in order. Read as lanes does (the scales between
// the two blocks' quads), Q8_0 groups streamed at 0.70-0.92 of the plain read from memory, in order at 0.83-1.00
// (one 2048 -> 5632 matmul, 16 copies, 2 threads, AMD EPYC). Through Engine that is 0.95-0.98 of the GGUF rows'
// one-token kernel (NOTE(nibble-x16)); two groups half a range apart (the GGUF kernel's two streams), or the next
// group or pair prefetched, were slower.
template <typename L>
void lane_pairs(const typename L::group * w, int64_t nb, const char * x, const token_block * tb, float * y) {
    const auto * xr = reinterpret_cast<const typename L::act *>(x);
    __m512 acc = _mm512_setzero_ps();
    for (int64_t b = 0; b < nb; b += 2) {
        __m512i c[2];
        for (int h = 0; h < 2; ++h) {
            __m512i lo[4], hi[4];
            unpack_block<L>(w, b + h, lo, hi);
            c[h] = block_dots(lo, hi, xr[b + h].qs, tb[b + h].start);
        }
        for (int h = 0; h < 2; ++h) {
            const __m512 dw = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(L::d(w, b + h))));
            acc = _mm512_fmadd_ps(_mm512_mul_ps(dw, _mm512_set1_ps(tb[b + h].dx)), _mm512_cvtepi32_ps(c[h]), acc);
        }
    }
    _mm512_storeu_ps(y, acc);
}

// L's prompt format on the repacked groups: its panels are whole groups, whose rows' int8 weights and entries
// prepare_panel decodes from the groups — the levels of unpack_block transposed 16 x 4 dwords at a time, less the
// offset (the weights kernels/simd/int8-weights.h decodes from the rows), the entries from 16 lanes at once — so the
// tiles read the same panel as from the GGUF rows. (Taking the groups back into GGUF blocks first and decoding
// those as the rows are made the 16-token matmul ~15 % slower.)
template <typename L>
struct x16_format : L::prompt {
    using base = typename L::prompt;
    static constexpr int panel_unit = k_x16_rows;

    // Block b of the group at g decoded for the panel: rows[i][h] holds the 32 int8 weights of row 8h + i (its low
    // 256 bits) and of row 8h + 4 + i (its high 256 bits), the levels of unpack_block transposed; 128-bit lane j of
    // entries[h] holds the entries of rows 4j + 2h and 4j + 2h + 1 — Q4_1's (d_w, m_w), else (-128 * sum(w_b), d_w),
    // the sum from the levels (a lane a row) less their offset.
    static void decode_block(const typename L::group * g, int64_t b, __m512i (&rows)[4][2], __m512 (&entries)[2]) {
        // Quad words of (lo, hi): the weights of rows 4j + i (lo's lane j: elements 0..15, hi's lane j: 16..31).
        const __m512i rows_0_1 = _mm512_setr_epi64(0, 1, 8, 9, 2, 3, 10, 11), rows_2_3 = _mm512_setr_epi64(4, 5, 12, 13, 6, 7, 14, 15);
        __m512i lo[4], hi[4];
        unpack_block<L>(g, b, lo, hi);
        // 128-bit lane j of the result's [i]: row 4j + i's 4 dwords of v (16 levels).
        const auto transpose = [](const __m512i (&v)[4], __m512i (&out)[4]) {
            const __m512i t0 = _mm512_unpacklo_epi32(v[0], v[1]), t1 = _mm512_unpackhi_epi32(v[0], v[1]);
            const __m512i t2 = _mm512_unpacklo_epi32(v[2], v[3]), t3 = _mm512_unpackhi_epi32(v[2], v[3]);
            out[0] = _mm512_unpacklo_epi64(t0, t2);
            out[1] = _mm512_unpackhi_epi64(t0, t2);
            out[2] = _mm512_unpacklo_epi64(t1, t3);
            out[3] = _mm512_unpackhi_epi64(t1, t3);
        };
        __m512i ul[4], uh[4];
        transpose(lo, ul);
        transpose(hi, uh);
        // The weights: the levels less the offset (mod 256: IQ4_NL's table level, Q4_0's n - 8, Q5_0's n - 16).
        const __m512i offset = _mm512_set1_epi8(char(L::offset));
        for (int i = 0; i < 4; ++i) {
            const __m512i wl = _mm512_sub_epi8(ul[i], offset), wh = _mm512_sub_epi8(uh[i], offset);
            rows[i][0] = _mm512_permutex2var_epi64(wl, rows_0_1, wh);
            rows[i][1] = _mm512_permutex2var_epi64(wl, rows_2_3, wh);
        }
        const __m512 dw = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(L::d(g, b))));
        __m512 first, second;
        if constexpr (L::has_min) {
            first = dw;
            second = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(L::m(g, b))));
        } else {
            const __m512i ones = _mm512_set1_epi8(1);
            __m512i sum = _mm512_set1_epi32(-L::offset * quant::qk8_0);
            for (int k = 0; k < 4; ++k) sum = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(sum, lo[k], ones), hi[k], ones);
            first = _mm512_castsi512_ps(_mm512_mullo_epi32(sum, _mm512_set1_epi32(-128)));
            second = dw;
        }
        entries[0] = _mm512_unpacklo_ps(first, second);
        entries[1] = _mm512_unpackhi_ps(first, second);
    }

    // Rows w .. w + rows - 1 (rows a multiple of 16, w a group's start; wb the bytes of a row's share of a group).
    // Two blocks at a time, so that each row's weights are stored a whole cache line at a time and its entries 16
    // bytes at a time (a block at a time, 16 rows' 32-byte halves of lines interleaved, the panel's preparation took
    // half as long again as from the GGUF rows, and a 16-token matmul from memory was ~12 % slower).
    static void prepare_panel(const char * w, size_t wb, int64_t rows, int64_t nb, typename base::entry * meta, int8_t * staging) {
        static_assert(sizeof(typename base::entry) == 8 && base::staging_bytes == 32, "an entry is a 64-bit lane, a block 32 weights");
        const auto weights_at = [&](int64_t row, int64_t b) { return staging + size_t(row * nb + b) * base::staging_bytes; };
        // Quad words of (block b, block b + 1) rows: the low 256 bits of both, or the high 256 bits of both.
        const __m512i low_halves = _mm512_setr_epi64(0, 1, 2, 3, 8, 9, 10, 11), high_halves = _mm512_setr_epi64(4, 5, 6, 7, 12, 13, 14, 15);
        for (int64_t g0 = 0; g0 < rows; g0 += k_x16_rows) {
            const auto * g = reinterpret_cast<const typename L::group *>(w + size_t(g0) * wb);
            int64_t b = 0;
            for (; b + 1 < nb; b += 2) {
                __m512i ra[4][2], rb[4][2];
                __m512 ea[2], eb[2];
                decode_block(g, b, ra, ea);
                decode_block(g, b + 1, rb, eb);
                for (int i = 0; i < 4; ++i)
                    for (int h = 0; h < 2; ++h) {
                        _mm512_storeu_si512(weights_at(g0 + 8 * h + i, b), _mm512_permutex2var_epi64(ra[i][h], low_halves, rb[i][h]));
                        _mm512_storeu_si512(weights_at(g0 + 8 * h + 4 + i, b), _mm512_permutex2var_epi64(ra[i][h], high_halves, rb[i][h]));
                    }
                for (int h = 0; h < 2; ++h) {
                    // 128-bit lane j: row 4j + 2h's entries of blocks b and b + 1, then row 4j + 2h + 1's.
                    const __m512i even = _mm512_unpacklo_epi64(_mm512_castps_si512(ea[h]), _mm512_castps_si512(eb[h]));
                    const __m512i odd = _mm512_unpackhi_epi64(_mm512_castps_si512(ea[h]), _mm512_castps_si512(eb[h]));
                    const __m128i e[2][4] = {{_mm512_extracti32x4_epi32(even, 0), _mm512_extracti32x4_epi32(even, 1), _mm512_extracti32x4_epi32(even, 2),
                                              _mm512_extracti32x4_epi32(even, 3)},
                                             {_mm512_extracti32x4_epi32(odd, 0), _mm512_extracti32x4_epi32(odd, 1), _mm512_extracti32x4_epi32(odd, 2),
                                              _mm512_extracti32x4_epi32(odd, 3)}};
                    for (int j = 0; j < 4; ++j)
                        for (int o = 0; o < 2; ++o) _mm_storeu_si128(reinterpret_cast<__m128i *>(meta + (g0 + 4 * j + 2 * h + o) * nb + b), e[o][j]);
                }
            }
            if (b < nb) {   // an odd last block (Q4_1)
                __m512i ra[4][2];
                __m512 ea[2];
                decode_block(g, b, ra, ea);
                for (int i = 0; i < 4; ++i)
                    for (int h = 0; h < 2; ++h) {
                        _mm256_storeu_si256(reinterpret_cast<__m256i *>(weights_at(g0 + 8 * h + i, b)), _mm512_castsi512_si256(ra[i][h]));
                        _mm256_storeu_si256(reinterpret_cast<__m256i *>(weights_at(g0 + 8 * h + 4 + i, b)), _mm512_extracti64x4_epi64(ra[i][h], 1));
                    }
                for (int h = 0; h < 2; ++h)
                    for (int j = 0; j < 4; ++j) {
                        const __m128 two = _mm512_extractf32x4_ps(ea[h], j);
                        _mm_storel_pi(reinterpret_cast<__m64 *>(meta + (g0 + 4 * j + 2 * h) * nb + b), two);
                        _mm_storeh_pi(reinterpret_cast<__m64 *>(meta + (g0 + 4 * j + 2 * h + 1) * nb + b), two);
                    }
            }
        }
    }
};

// The matmul_rows_kernel of layout L: rows [r0, r1) (multiples of 16) x tokens [0, n_tok). Up to k_lanes_max_tokens
// tokens the groups' lanes, more the prompt tile; the reference when the scratch cannot be allocated.
template <typename L>
void rows(const void * w, size_t wb, const void * x, size_t xb, int64_t n_tok, int64_t n_in, int64_t r0, int64_t r1, float * y,
          int64_t ldy) {
    if (n_tok <= 0 || r1 <= r0) return;
    const int64_t nb = n_in / quant::qk8_0;
    const char * wc = static_cast<const char *>(w);
    const char * xc = static_cast<const char *>(x);
    if (n_tok > k_lanes_max_tokens) {
        if (!token_lanes_avx512::prompt_rows<x16_format<L>>(wc, wb, xc, xb, n_tok, nb, r0, r1, y, ldy))
            L::prompt::reference(w, wb, x, xb, n_tok, n_in, r0, r1, y, ldy);
        return;
    }
    auto * prepared = reinterpret_cast<token_block *>(avx512_vnni::scratch_space<0>(size_t(n_tok * nb) * sizeof(token_block)));
    if (!prepared) {
        L::prompt::reference(w, wb, x, xb, n_tok, n_in, r0, r1, y, ldy);
        return;
    }
    const token_block * tb[k_lanes_max_tokens];
    for (int64_t t = 0; t < n_tok; ++t) {
        prepare_token<L>(reinterpret_cast<const typename L::act *>(xc + size_t(t) * xb), nb, prepared + t * nb);
        tb[t] = prepared + t * nb;
    }
    using lanes_fn = void (*)(const typename L::group *, int64_t, const char *, size_t, const token_block * const *, float *, int64_t,
                              const char *, size_t);
    static constexpr lanes_fn by_count[] = {nullptr,      lanes<L, 1>,  lanes<L, 2>,  lanes<L, 3>,  lanes<L, 4>,  lanes<L, 5>,
                                            lanes<L, 6>,  lanes<L, 7>,  lanes<L, 8>,  lanes<L, 9>,  lanes<L, 10>, lanes<L, 11>,
                                            lanes<L, 12>, lanes<L, 13>, lanes<L, 14>, lanes<L, 15>, lanes<L, 16>};
    static_assert(sizeof by_count / sizeof by_count[0] == k_lanes_max_tokens + 1, "one kernel per token count");
    const size_t group_bytes = size_t(k_x16_rows) * wb, share = group_bytes / size_t(nb);
    for (int64_t r = r0; r < r1; r += k_x16_rows) {
        const char * group = wc + size_t(r) * wb;
        if constexpr (L::pair_scales) {
            static_assert(!L::has_min, "lane_pairs has no minimum");
            if (n_tok == 1) {
                lane_pairs<L>(reinterpret_cast<const typename L::group *>(group), nb, xc, tb[0], y + r);
                continue;
            }
        }
        const char * next = n_tok >= k_lanes_prefetch_tokens && r + k_x16_rows < r1 ? group + group_bytes : nullptr;
        by_count[n_tok](reinterpret_cast<const typename L::group *>(group), nb, xc, xb, tb, y + r, ldy, next, share);
    }
}

} // namespace nibble_x16_avx512
} // namespace
} // namespace tmill::kernels
