// The row x token tile walk shared by the SIMD matmul kernels. Everything here is a template in an
// anonymous namespace: each ISA translation unit gets its own internal copy compiled with its own
// flags, so no instantiation can leak across ISAs through the linker.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tmill::kernels {
namespace {

// Walks tokens in groups of 4 (then the 1-3 left) and, for each group, rows in tiles of R_ONE rows
// (single token) or R_MANY rows (several tokens), then single rows. K<R, T>::fn(w, wb, x, xb, n_in,
// y, ldy) computes an R x T tile with w at its first row, x at its first token, y at y[t0][r0].
// A kernel must compute each (row, token) pair identically in every tile shape (batch invariance).
template <template <int, int> class K, int R_ONE, int R_MANY>
void tile_walk(const void * w, size_t wb, const void * x, size_t xb, int64_t n_tok, int64_t n_in, int64_t r0,
               int64_t r1, float * y, int64_t ldy) {
    const char * wc = static_cast<const char *>(w);
    const char * xc = static_cast<const char *>(x);
    using fn_t = void (*)(const char *, size_t, const char *, size_t, int64_t, float *, int64_t);
    int64_t t = 0;
    while (t < n_tok) {
        const int64_t left = n_tok - t;
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

} // namespace
} // namespace tmill::kernels
