// The call every AMX matmul makes (kernels/amx/matmul-q8-0.cpp, matmul-q4-k.cpp, matmul-q6-k.cpp): its small
// batches, its scratch, and its walk over the rows and tokens:
// tokens in passes of up to k_amx_pass_bytes of packed activations (read from L2), each pass walking every
// group of 16 rows once — so that a group's weights are read from memory, and converted for the tiles where
// they must be, once per pass — and the pass's groups of 16 tokens inside. Internal linkage, as
// kernels/tiling.h.
#pragma once

#include "kernels/amx/amx.h"
#include "kernels/amx/tile-session.h"
#include "kernels/block-step/vnni-pack.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

namespace tmill::kernels {
namespace {

// Packed activations per pass over the rows (the A operands, read from L2).
constexpr size_t k_amx_pass_bytes = size_t(1) << 20;

// Token groups per pass when a group's packed activations take group_pack bytes: as many as k_amx_pass_bytes
// holds, at least one, at most all of the n_tok tokens' groups.
inline int64_t pass_token_groups(int64_t n_tok, size_t group_pack) {
    const int64_t token_groups = (n_tok + k_amx_tile_tokens - 1) / k_amx_tile_tokens;
    return std::clamp<int64_t>(int64_t(k_amx_pass_bytes / group_pack), 1, token_groups);
}

// f(std::integral_constant<int, n>{}) for a token count n of 1..16: the row-group kernels are compiled per
// count, so a group of n tokens folds n accumulators.
template <typename F, int... N>
void with_token_count(int n, const F & f, std::integer_sequence<int, N...>) {
    static_cast<void>(((n == N + 1 ? (f(std::integral_constant<int, N + 1>{}), true) : false) || ...));
}
template <typename F>
void with_token_count(int n, const F & f) {
    with_token_count(n, f, std::make_integer_sequence<int, int(k_amx_tile_tokens)>{});
}

// What an AMX matmul's call takes besides its callbacks (amx_rows).
struct amx_call {
    matmul_rows_kernel * small;       // batches below k_amx_min_tokens (the AVX-512 kernel, the same bits); nullptr: all on tiles
    matmul_rows_kernel * reference;   // the scalar reference (the same bits), run when the scratch cannot be allocated
    size_t group_pack;                // bytes of one 16-token group's packed activations
    size_t group_bytes;               // bytes of a row group's weights as the tiles read them (0: read in place)
    int k_bytes;                      // K of a product and the operand layout (tile-session.h)
    tile_layout layout;
};

// Rows r0..r1 of weights w (row stride wb) x the n_tok tokens of x (row stride xb) into y (ldy): a call of an AMX
// matmul (kernels/amx/matmul-*.cpp). Small batches go to c.small; else the scratch, per thread
// (avx512_vnni::scratch_space: a pass's packed activations, slot 0, and a row group's weights, slot 1) or, when it
// cannot be allocated, c.reference; then the passes, the thread's tile configuration restored when the call
// ends. Per pass, pack(xt, n, dst) packs each token group (n tokens from row xt); then per row group of up to 16
// rows start(wg, m, group) prepares its m rows from wg in the group scratch, and run(n, packed, yg, m) multiplies
// them with each packed token group, tiles configured for its n tokens, into yg (the group's first row, the token
// group's first token).
template <typename Pack, typename Start, typename Run>
void amx_rows(const amx_call & c, const void * w, size_t wb, const void * x, size_t xb, int64_t n_tok, int64_t n_in, int64_t r0,
              int64_t r1, float * y, int64_t ldy, const Pack & pack, const Start & start, const Run & run) {
    if (n_tok <= 0 || r1 <= r0) return;
    if (c.small && n_tok < k_amx_min_tokens) {
        c.small(w, wb, x, xb, n_tok, n_in, r0, r1, y, ldy);
        return;
    }
    const int64_t token_groups = (n_tok + k_amx_tile_tokens - 1) / k_amx_tile_tokens;
    const int64_t pass_groups = pass_token_groups(n_tok, c.group_pack);
    uint8_t * packs = avx512_vnni::scratch_space<0>(size_t(pass_groups) * c.group_pack);
    uint8_t * group = c.group_bytes ? avx512_vnni::scratch_space<1>(c.group_bytes) : nullptr;
    if (!packs || (c.group_bytes && !group)) {
        c.reference(w, wb, x, xb, n_tok, n_in, r0, r1, y, ldy);
        return;
    }
    const char * wc = static_cast<const char *>(w);
    const char * xc = static_cast<const char *>(x);
    const auto tokens_of = [&](int64_t tg) { return int(std::min<int64_t>(k_amx_tile_tokens, n_tok - tg * k_amx_tile_tokens)); };
    tile_session tiles(c.k_bytes, c.layout);
    for (int64_t p0 = 0; p0 < token_groups; p0 += pass_groups) {
        const int64_t p1 = std::min(token_groups, p0 + pass_groups);
        for (int64_t tg = p0; tg < p1; ++tg)
            pack(xc + size_t(tg * k_amx_tile_tokens) * xb, tokens_of(tg), packs + size_t(tg - p0) * c.group_pack);
        for (int64_t g0 = r0; g0 < r1; g0 += k_amx_tile_rows) {
            const int m = int(std::min<int64_t>(k_amx_tile_rows, r1 - g0));
            start(wc + size_t(g0) * wb, m, group);
            for (int64_t tg = p0; tg < p1; ++tg) {
                const int n = tokens_of(tg);
                tiles.tokens(n);
                run(n, packs + size_t(tg - p0) * c.group_pack, y + tg * k_amx_tile_tokens * ldy + g0, m);
            }
        }
    }
}

} // namespace
} // namespace tmill::kernels
