// The row x token tile walk shared by the SIMD matmul kernels. Everything here is a template in an
// anonymous namespace: each ISA translation unit gets its own internal copy compiled with its own
// flags, so no instantiation can leak across ISAs through the linker.
#pragma once

#include <cstddef>
#include <cstdint>
#include <xmmintrin.h>

namespace tmill::kernels {
namespace {

// Asks every cache line of *p into the cache level Hint (_MM_HINT_T0: L1, _MM_HINT_T1: L2): the streaming kernels'
// prefetch of a weight block they will read soon (p's object starts on a cache line in the repacked copies).
template <int Hint, typename T>
inline void prefetch_object(const T * p) {
    for (size_t l = 0; l < sizeof(T); l += 64) _mm_prefetch(reinterpret_cast<const char *>(p) + l, static_cast<_mm_hint>(Hint));
}

// NOTE(next-tile-prefetch): a tile of several rows and tokens reads its rows side by side, adjacent in memory, and
// the hardware prefetcher follows that poorly: from memory the first token group of a panel (NOTE(tiling)) ran at
// about half the rate it reaches once the panel is in L2, and a call of 2 to 16 tokens has few or no other groups
// to make up for it. So such a tile asks, at each of its blocks, the same block of the next tile's rows into L1.
// Past a task's rows a prefetch only costs a read. Measured with the scratch one-matmul program, 2 threads, from
// memory, on the AMD EPYC (Zen 4) at the avx2 level:
//  - Q8_0, 2048 -> 5632, 2 x 4 tiles: 2, 4, 8 and 16 tokens 24, 43, 49-56 and 65-67 -> 53-62, 71-77, 75-77 and
//    79-81 G multiply-adds a second, 512 tokens 79-80 -> 82; from L2 about 1 % slower;
//  - Q6_K prompt tiles: 8960 -> 1536 (4 rows), 8, 16 and 64 tokens 74-79, 95 and 103-107 -> 115-117, 118-120 and
//    120-122; 1536 -> 20480 (1 row), 96-100, 102-104 and 108 -> 111-114, 117-118 and 118; from L2 -2 % to +7 %;
//  - Q5_K, 2048 -> 5632, 2 x up to 4 tiles for every token count: 2, 4, 16 and 64 tokens 28-33, 41-55, 63-87 and
//    87-96 -> 59-70, 83-102, 81-99 and 106.
// The one-row tiles of Q2_K, Q3_K and IQ4_XS (matmul-superblock.cpp), bound by their unpacking, gained nothing.
// Block: the tile's block type; w: its first row; b: the block the tile is at.
template <int R, typename Block>
inline void prefetch_next_tile(const char * w, size_t wb, int64_t b) {
    for (int r = 0; r < R; ++r) prefetch_object<_MM_HINT_T0>(reinterpret_cast<const Block *>(w + size_t(R + r) * wb) + b);
}

// Walks tokens [t0, t1) in groups of 4 (then the 1-3 left) and, for each group, rows [r0, r1) in tiles
// of R_ONE rows (single token) or R_MANY rows (several tokens), then single rows. K<R, T>::fn(w, wb, x,
// xb, n_in, y, ldy) computes an R x T tile with w at its first row, x at its first token, y at y[t][r].
// A kernel must compute each (row, token) pair identically in every tile shape (batch invariance).
template <template <int, int> class K, int R_ONE, int R_MANY>
void tile_walk_block(const char * wc, size_t wb, const char * xc, size_t xb, int64_t t0, int64_t t1, int64_t n_in,
                     int64_t r0, int64_t r1, float * y, int64_t ldy) {
    using fn_t = void (*)(const char *, size_t, const char *, size_t, int64_t, float *, int64_t);
    int64_t t = t0;
    while (t < t1) {
        const int64_t left = t1 - t;
        const int n_t = left >= 4 ? 4 : int(left);
        fn_t wide = nullptr, single = nullptr;
        int rows = R_MANY;
        switch (n_t) {
            case 4: wide = K<R_MANY, 4>::fn; single = K<1, 4>::fn; break;
            case 3: wide = K<R_MANY, 3>::fn; single = K<1, 3>::fn; break;
            case 2: wide = K<R_MANY, 2>::fn; single = K<1, 2>::fn; break;
            default: wide = K<R_ONE, 1>::fn; single = K<1, 1>::fn; rows = R_ONE; break;
        }
        const char * xt = xc + size_t(t) * xb;
        float * yt = y + t * ldy;
        int64_t r = r0;
        for (; r + rows <= r1; r += rows) wide(wc + size_t(r) * wb, wb, xt, xb, n_in, yt + r, ldy);
        for (; r < r1; ++r) single(wc + size_t(r) * wb, wb, xt, xb, n_in, yt + r, ldy);
        t += n_t;
    }
}

// NOTE(few-token-sets): a few tokens (decode, a few streams), up to 4 a chunk, take a range's rows in sets of S
// spread evenly over it (rows r, r + h, r + 2h, ...: a tile of K<S, T> with row stride h * wb), so a tile's rows
// share its activation loads (and Q4_K's header unpacking and reductions) while each row streams far from the
// others: adjacent rows read side by side came from memory at half the rate on the AMD EPYC (NOTE(k-matmul-tiles),
// NOTE(next-tile-prefetch)). The leftover rows take one-row tiles. A row's arithmetic is its tile's, whatever the
// set; each chunk reads the weights once.
template <template <int, int> class K, int S, int T>
void spread_sets(const char * w, size_t wb, const char * x, size_t xb, int64_t n_in, int64_t r0, int64_t r1, float * y,
                 int64_t ldy) {
    const int64_t h = (r1 - r0) / S;
    for (int64_t i = r0; i < r0 + h; ++i) {
        float out[T * S];
        K<S, T>::fn(w + size_t(i) * wb, size_t(h) * wb, x, xb, n_in, out, S);
        for (int t = 0; t < T; ++t)
            for (int s = 0; s < S; ++s) y[t * ldy + i + s * h] = out[t * S + s];
    }
    for (int64_t r = r0 + S * h; r < r1; ++r) K<1, T>::fn(w + size_t(r) * wb, wb, x, xb, n_in, y + r, ldy);
}

template <template <int, int> class K, int S>
void few_tokens(const void * w, size_t wb, const void * x, size_t xb, int64_t n_tok, int64_t n_in, int64_t r0, int64_t r1,
                float * y, int64_t ldy) {
    using fn = void (*)(const char *, size_t, const char *, size_t, int64_t, int64_t, int64_t, float *, int64_t);
    static constexpr fn by_count[5] = {nullptr, spread_sets<K, S, 1>, spread_sets<K, S, 2>, spread_sets<K, S, 3>, spread_sets<K, S, 4>};
    for (int64_t t = 0; t < n_tok; t += 4) {
        const int n = int(n_tok - t < 4 ? n_tok - t : 4);
        by_count[n](static_cast<const char *>(w), wb, static_cast<const char *>(x) + size_t(t) * xb, xb, n_in, r0, r1, y + t * ldy, ldy);
    }
}

// NOTE(tiling): cache blocking. Rows [r0, r1) x all tokens, cut into blocks of about k_x_block bytes of
// activation rows and k_w_panel bytes of weight rows: a block's activations and a panel's weights stay
// in L2 while every 4-token group of the block walks the panel, so each weight row comes from memory
// once per token block instead of once per 4 tokens. Only the visiting order changes, never a pair's
// arithmetic (see tile_walk_block).
constexpr size_t k_x_block = 192 * 1024;
constexpr size_t k_w_panel = 160 * 1024;

// The blocks of NOTE(tiling) for rows [r0, r1) (panels a multiple of `unit` rows) x tokens [0, n_tok):
// visit(t0, t1, p0, p1) once per token block and panel, token blocks outermost.
template <typename Visit>
void cache_blocks(size_t wb, size_t xb, int64_t n_tok, int64_t r0, int64_t r1, int64_t unit, Visit && visit) {
    int64_t tb = int64_t(k_x_block / (xb ? xb : 1)) / 4 * 4;
    int64_t rb = int64_t(k_w_panel / (wb ? wb : 1)) / unit * unit;
    if (tb < 4) tb = 4;
    if (rb < unit) rb = unit;
    // One token group (decode): no weight row is read twice, so panels buy nothing; one range keeps a
    // task's rows one sequential stream.
    if (n_tok <= 4) rb = r1 - r0;
    for (int64_t t0 = 0; t0 < n_tok; t0 += tb) {
        const int64_t t1 = t0 + tb < n_tok ? t0 + tb : n_tok;
        for (int64_t p0 = r0; p0 < r1; p0 += rb) visit(t0, t1, p0, p0 + rb < r1 ? p0 + rb : r1);
    }
}

template <template <int, int> class K, int R_ONE, int R_MANY>
void tile_walk(const void * w, size_t wb, const void * x, size_t xb, int64_t n_tok, int64_t n_in, int64_t r0,
               int64_t r1, float * y, int64_t ldy) {
    const char * wc = static_cast<const char *>(w);
    const char * xc = static_cast<const char *>(x);
    cache_blocks(wb, xb, n_tok, r0, r1, R_MANY, [&](int64_t t0, int64_t t1, int64_t p0, int64_t p1) {
        tile_walk_block<K, R_ONE, R_MANY>(wc, wb, xc, xb, t0, t1, n_in, p0, p1, y, ldy);
    });
}

// The matmul rows of a weight type whose blocks are 32 int8 weights against Q8_0 or Q8_1 activations (Block: Q8_0,
// Q4_0, Q5_0, IQ4_NL, Q4_1, Q5_1): the level's block-step kernels where its integer dots D have them
// (D::block_step, AVX-512: docs/kernels.md, "Matrix products"), else K in llama.cpp's order: one token in sets of
// S_ONE rows spread over the range (NOTE(one-token-sets)), more in the tile walk with tiles of R_MANY rows.
//
// NOTE(one-token-sets): one token's tile of one row is one FMA chain over the row's blocks, which waits on the FMA's
// latency, and tiles of adjacent rows read side by side, which the hardware prefetcher follows poorly
// (NOTE(next-tile-prefetch)). Sets of 4 rows a quarter of the range apart have neither. Measured with the scratch
// one-matmul program on the AMD EPYC (Zen 4) at the avx2 level, Q8_0, G multiply-adds a second: 2048 -> 2048 from
// L3, 2 threads, one-row tiles 39-49, sets of 4 rows 57-59 (2 rows 54-57, 8 rows 56-57), adjacent 2 and 4 rows
// 27-54 and 56-57; 2048 -> 5632 from memory, 30-34 -> 35-36 (sets of 8 rows: 29-30; adjacent 4 rows: 20-22). With
// the one-token scale product of kernels/pair-scales.h as well, one thread from L2 (1024 -> 512): 23.8 -> 33.0.
template <typename D, typename Block, template <int, int> class K, int S_ONE, int R_MANY>
void int8_block_rows(const void * w, size_t wb, const void * x, size_t xb, int64_t n_tok, int64_t n_in, int64_t r0,
                     int64_t r1, float * y, int64_t ldy) {
    if constexpr (D::block_step)
        D::template block_step_rows<Block>(w, wb, x, xb, n_tok, n_in, r0, r1, y, ldy);
    else if (n_tok == 1)
        few_tokens<K, S_ONE>(w, wb, x, xb, n_tok, n_in, r0, r1, y, ldy);
    else
        tile_walk<K, 1, R_MANY>(w, wb, x, xb, n_tok, n_in, r0, r1, y, ldy);
}

} // namespace
} // namespace tmill::kernels
