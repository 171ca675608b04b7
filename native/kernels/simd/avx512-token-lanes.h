// The AVX-512 prompt driver shared by the matmuls that put 16 tokens in the lanes of a zmm (avx512-block-step.h:
// Q8_0, Q4_0, IQ4_NL, Q5_0; avx512-q4-k-lanes.h: Q4_K): the activations of each 16-token group repacked once per
// call in the VNNI layout (int32 lane t = 4 bytes of token t), the weights prepared once per call for a panel of
// rows (their per-block entries and, unless read in place, their int8 values), and a format's tile of R rows
// against one group, the group's activations shared by the R rows. Included by those headers only (AVX-512 +
// VNNI), internal linkage as tiling.h.
#pragma once

#include "kernels/block-step/vnni-pack.h"
#include "kernels/simd/avx2-traits.h"
#include "kernels/simd/avx512-traits.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>

namespace tmill::kernels {
namespace {
namespace token_lanes_avx512 {

using namespace avx512_vnni;

// A tile's vector: the 16 tokens of a group in a zmm, or, for a group of at most 8 tokens, its first 8 in a
// ymm (on Zen 4 a 512-bit operation holds its pipe for two cycles, so half the lanes cost half). The float
// operations are the level traits' of that width; the tiles add their integer ones.
struct lanes16 : avx512_traits {
    using vi = __m512i;
    static vi load_i(const uint8_t * p) { return _mm512_loadu_si512(p); }
    static vi set1_i(int32_t v) { return _mm512_set1_epi32(v); }
    static vi dpbusd(vi c, vi u, vi s) { return _mm512_dpbusd_epi32(c, u, s); }
    static vi dpwssd(vi c, vi a, vi b) { return _mm512_dpwssd_epi32(c, a, b); }
    static vi add_i(vi a, vi b) { return _mm512_add_epi32(a, b); }
    static vi mullo_i(vi a, vi b) { return _mm512_mullo_epi32(a, b); }
    static f32 to_f32(vi c) { return _mm512_cvtepi32_ps(c); }
};
struct lanes8 : avx2_traits {
    using vi = __m256i;
    static vi load_i(const uint8_t * p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i *>(p)); }
    static vi set1_i(int32_t v) { return _mm256_set1_epi32(v); }
    static vi dpbusd(vi c, vi u, vi s) { return _mm256_dpbusd_epi32(c, u, s); }
    static vi dpwssd(vi c, vi a, vi b) { return _mm256_dpwssd_epi32(c, a, b); }
    static vi add_i(vi a, vi b) { return _mm256_add_epi32(a, b); }
    static vi mullo_i(vi a, vi b) { return _mm256_mullo_epi32(a, b); }
    static f32 to_f32(vi c) { return _mm256_cvtepi32_ps(c); }
};

// About this many bytes of panel entries and int8 weights (decoded, or read in place) per panel: with a
// 16-token group's activations and the next panel prefetched beside it, the working set stays in a 1 MB L2.
// (Counting only the entries, Q8_0's panels held 696 KB of weights, and with the next one prefetched they
// overflowed the EPYC's L2: a 16-stream step about 5 % slower.)
constexpr size_t k_panel_bytes = 160 * 1024;

// Token groups packed at a time: bounds the per-thread pack buffer (for Q8_0 16 * 576 bytes per block, 1.6 MB
// for a 5632-wide row) whatever the batch; the weights are read once per this many tokens.
constexpr int64_t k_pass_groups = 16;

// A tile's per-block start: block b's share of the next panel's weights prefetched to L2 (pf_lines cache lines
// from pf + b * pf_lines lines, prompt_rows' slices) ...
inline void prefetch_panel_lines(const char * pf, int64_t b, int pf_lines) {
    for (int j = 0; j < pf_lines; ++j) _mm_prefetch(pf + (size_t(b) * pf_lines + j) * 64, _MM_HINT_T1);
}
// ... and, for the 32-block formats, the block's k_pack_quads quad rows of the group's packed activations (64
// bytes each, at xp) in L's lanes.
template <typename L>
void load_quad_rows(const uint8_t * xp, typename L::vi * xv) {
    for (int k = 0; k < k_pack_quads; ++k) xv[k] = L::load_i(xp + 64 * k);
}

// A format F gives:
//   block, in_place          its GGUF block; whether the tiles read the int8 weights in place (at block.qs)
//   staging_bytes            else the bytes of one block's int8 weights in the panel's decoded copy
//   entry                    its per (row, block) panel entry
//   pack_block               the bytes of one block of a packed 16-token group
//   tile_rows                the rows of its widest tile
//   panel_unit               the rows every panel but a range's last is a multiple of (the 16-row groups of a
//                            repacked layout, whose rows prepare_panel finds only from a group's start)
//   pack(x, xb, n, nb, dst)  tokens x .. x + n - 1 (n <= 16) of nb blocks each, packed
//   prepare_panel(w, wb, rows, nb, entries, staging)   the panel's entries (and decoded weights)
//   tile<L, R>(q, rs, bs, entries, nb, pack, out, pf, pf_lines)   R rows x the group: out[r * 16 + t];
//       row r's int8 block b at q + r * rs + b * bs; pf_lines cache lines from pf on prefetched to L2 per block
template <typename F>
using tile_fn = void (*)(const int8_t *, size_t, size_t, const typename F::entry *, int64_t, const uint8_t *, float *,
                        const char *, int);

template <typename F, typename L, int... R>
constexpr auto tiles_for(std::integer_sequence<int, R...>) {
    return std::array<tile_fn<F>, sizeof...(R)>{(R == 0 ? tile_fn<F>(nullptr) : F::template tile<L, (R > 0 ? R : 1)>)...};
}
// F's tiles of 1 .. F::tile_rows rows, indexed by the row count.
template <typename F, typename L>
constexpr auto k_tiles = tiles_for<F, L>(std::make_integer_sequence<int, F::tile_rows + 1>{});

// Rows [r0, r1) x tokens [0, n_tok) of format F: false when the scratch buffers cannot be allocated.
template <typename F>
bool prompt_rows(const char * w, size_t wb, const char * x, size_t xb, int64_t n_tok, int64_t nb, int64_t r0, int64_t r1,
                 float * y, int64_t ldy) {
    constexpr int tile_rows = F::tile_rows;
    const int64_t groups = (n_tok + k_pack_tokens - 1) / k_pack_tokens;
    const int64_t pass_groups = groups < k_pass_groups ? groups : k_pass_groups;
    const size_t row_bytes = size_t(nb) * (sizeof(typename F::entry) + (F::in_place ? 0 : F::staging_bytes));
    const size_t row_working_set = row_bytes + (F::in_place ? wb : 0);   // plus the weights read in place
    constexpr int unit = F::panel_unit;
    static_assert(unit % tile_rows == 0 || tile_rows % unit == 0, "panels and tiles share their row boundaries");
    int64_t panel_rows = int64_t(k_panel_bytes / row_working_set) / unit * unit;
    if (panel_rows < unit) panel_rows = unit;
    if (panel_rows > r1 - r0) panel_rows = r1 - r0;
    // A task's first panel is read from memory with nothing to overlap (its prefetch would have to come
    // from another task, which may run on another core), so the panels start small and double: each
    // panel's tiles then have time to prefetch the next.
    constexpr int64_t first = 2 * tile_rows > unit ? 2 * tile_rows : unit;
    const int64_t first_rows = first < panel_rows ? first : panel_rows;
    auto grown = [panel_rows](int64_t size) { return 2 * size < panel_rows ? 2 * size : panel_rows; };
    uint8_t * pack = scratch_space<0>(size_t(pass_groups * nb) * F::pack_block);
    uint8_t * panel = scratch_space<1>(size_t(panel_rows) * row_bytes);
    if (!pack || !panel) return false;
    auto * meta = reinterpret_cast<typename F::entry *>(panel);
    int8_t * staging = reinterpret_cast<int8_t *>(panel + size_t(panel_rows * nb) * sizeof(typename F::entry));
    alignas(64) float out[tile_rows * k_pack_tokens];
    for (int64_t g0 = 0; g0 < groups; g0 += pass_groups) {
        const int64_t g1 = g0 + pass_groups < groups ? g0 + pass_groups : groups;
        auto tokens_of = [&](int64_t g) {
            const int64_t left = n_tok - g * k_pack_tokens;
            return int(left < k_pack_tokens ? left : k_pack_tokens);
        };
        for (int64_t g = g0; g < g1; ++g)
            F::pack(x + size_t(g * k_pack_tokens) * xb, xb, tokens_of(g), nb, pack + size_t((g - g0) * nb) * F::pack_block);
        for (int64_t p0 = r0, size = first_rows, rows = 0; p0 < r1; p0 += rows, size = grown(size)) {
            rows = size < r1 - p0 ? size : r1 - p0;
            const char * wp = w + size_t(p0) * wb;
            F::prepare_panel(wp, wb, rows, nb, meta, staging);
            const int8_t * q = staging;
            size_t rs = size_t(nb) * F::staging_bytes, bs = F::staging_bytes;
            if constexpr (F::in_place) {
                q = reinterpret_cast<const int8_t *>(wp + offsetof(typename F::block, qs));
                rs = wb;
                bs = sizeof(typename F::block);
            }
            // The next panel (this pass's next, else the next pass's first) comes from memory while this one
            // computes: its bytes are prefetched to L2 in equal slices by this panel's tile calls. Without
            // it prepare_panel waited for memory with nothing to overlap (a fifth of a 16-stream decode step).
            const bool last = p0 + rows >= r1;
            const int64_t n0 = !last ? p0 + rows : (g1 < groups ? r0 : r1);
            const int64_t next_size = !last ? grown(size) : first_rows;
            const int64_t next_rows = next_size < r1 - n0 ? next_size : r1 - n0;
            const char * next = w + size_t(n0) * wb;
            const int64_t calls = (g1 - g0) * ((rows + tile_rows - 1) / tile_rows);
            const int64_t call_lines = (int64_t(size_t(next_rows) * wb / 64) + calls) / calls;
            const int pf_lines = int((call_lines + nb - 1) / nb);
            int64_t call = 0;
            for (int64_t g = g0; g < g1; ++g) {
                const int64_t t0 = g * k_pack_tokens;
                const int n = tokens_of(g);
                const uint8_t * xp = pack + size_t((g - g0) * nb) * F::pack_block;
                const auto & tiles = n <= 8 ? k_tiles<F, lanes8> : k_tiles<F, lanes16>;
                for (int64_t i = 0; i < rows; i += tile_rows) {
                    const int m = int(rows - i < tile_rows ? rows - i : tile_rows);
                    tiles[m](q + size_t(i) * rs, rs, bs, meta + i * nb, nb, xp, out, next + size_t(call++ * nb * pf_lines) * 64,
                             pf_lines);
                    for (int t = 0; t < n; ++t)
                        for (int r = 0; r < m; ++r) y[(t0 + t) * ldy + p0 + i + r] = out[16 * r + t];
                }
            }
        }
    }
    return true;
}

} // namespace token_lanes_avx512
} // namespace
} // namespace tmill::kernels
