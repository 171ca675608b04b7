// The walk every AMX matmul makes over its rows and tokens (kernels/amx/matmul-q8-0.cpp, matmul-q4-k.cpp,
// matmul-q6-k.cpp), and its scratch:
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

// A call's scratch, per thread (avx512_vnni::scratch_space): the packed activations of a pass of pass_groups
// token groups (slot 0, group_pack bytes a group) and, when group_bytes is not 0, a row group's weights as the
// tiles read them (slot 1). ok is false when either cannot be allocated: the caller then runs its scalar
// reference, the same bits.
struct pass_scratch {
    int64_t pass_groups;
    uint8_t * pack;
    uint8_t * group;
    bool ok;
};
inline pass_scratch pass_scratch_for(int64_t n_tok, size_t group_pack, size_t group_bytes) {
    const int64_t pass_groups = pass_token_groups(n_tok, group_pack);
    uint8_t * pack = avx512_vnni::scratch_space<0>(size_t(pass_groups) * group_pack);
    uint8_t * group = group_bytes ? avx512_vnni::scratch_space<1>(group_bytes) : nullptr;
    return {pass_groups, pack, group, pack && (group || !group_bytes)};
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

// The walk over n_tok tokens and `groups` row groups, pass_groups token groups a pass (pass_token_groups), the
// pass's activations packed at pack, group_pack bytes per token group: per pass, pack_tokens(t0, n, dst) for
// each token group (tokens t0 .. t0 + n - 1), then for each row group start_group(g) once and run(g, t0, n,
// packed) for each token group, with tiles configured for its n tokens.
template <typename Pack, typename Start, typename Run>
void walk_passes(tile_session & tiles, int64_t n_tok, int64_t groups, int64_t pass_groups, uint8_t * pack, size_t group_pack,
                 const Pack & pack_tokens, const Start & start_group, const Run & run) {
    const int64_t token_groups = (n_tok + k_amx_tile_tokens - 1) / k_amx_tile_tokens;
    const auto tokens_of = [&](int64_t tg) { return int(std::min<int64_t>(k_amx_tile_tokens, n_tok - tg * k_amx_tile_tokens)); };
    for (int64_t p0 = 0; p0 < token_groups; p0 += pass_groups) {
        const int64_t p1 = std::min(token_groups, p0 + pass_groups);
        for (int64_t tg = p0; tg < p1; ++tg) pack_tokens(tg * k_amx_tile_tokens, tokens_of(tg), pack + size_t(tg - p0) * group_pack);
        for (int64_t g = 0; g < groups; ++g) {
            start_group(g);
            for (int64_t tg = p0; tg < p1; ++tg) {
                const int n = tokens_of(tg);
                tiles.tokens(n);
                run(g, tg * k_amx_tile_tokens, n, pack + size_t(tg - p0) * group_pack);
            }
        }
    }
}

} // namespace
} // namespace tmill::kernels
