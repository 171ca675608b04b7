// The row x token loop of the scalar quantized matmuls: y[t * ldy + r] = Dot(weight row r, activation
// row t, blocks per row) for every pair, one pair at a time (so trivially batch invariant); and for the rows
// repacked 16 at a time.
#pragma once

#include "quant/x16.h"

#include <cstddef>
#include <cstdint>

namespace tmill::kernels::ref {
namespace {

// W: the weight block type; A: the activation block type; block: elements per weight block.
template <typename W, typename A, int block, float (*Dot)(const W *, const A *, int64_t)>
void quant_rows(const void * w, size_t wb, const void * x, size_t xb, int64_t n_tok, int64_t n_in, int64_t r0,
                int64_t r1, float * y, int64_t ldy) {
    const int64_t nb = n_in / block;
    for (int64_t t = 0; t < n_tok; ++t) {
        const auto * xr = reinterpret_cast<const A *>(static_cast<const char *>(x) + size_t(t) * xb);
        for (int64_t r = r0; r < r1; ++r) {
            const auto * wr = reinterpret_cast<const W *>(static_cast<const char *>(w) + size_t(r) * wb);
            y[t * ldy + r] = Dot(wr, xr, nb);
        }
    }
}

// The same loop over rows repacked 16 at a time (quant/x16.h; r0 and r1 multiples of 16): y[t * ldy + r] =
// dot(g, lane, activation row t, blocks per row), g (of type G) the group holding row r, lane its place there.
template <typename G, typename A, int block, typename Dot>
void x16_rows(const void * w, size_t wb, const void * x, size_t xb, int64_t n_tok, int64_t n_in, int64_t r0, int64_t r1,
              float * y, int64_t ldy, const Dot & dot) {
    const int64_t nb = n_in / block;
    for (int64_t t = 0; t < n_tok; ++t) {
        const auto * xr = reinterpret_cast<const A *>(static_cast<const char *>(x) + size_t(t) * xb);
        for (int64_t r = r0; r < r1; ++r) {
            const int64_t first = r / quant::k_x16_rows * quant::k_x16_rows;
            const auto * g = reinterpret_cast<const G *>(static_cast<const char *>(w) + size_t(first) * wb);
            y[t * ldy + r] = dot(g, int(r - first), xr, nb);
        }
    }
}

} // namespace
} // namespace tmill::kernels::ref
