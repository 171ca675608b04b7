// The loop behind tm_test::expf_rows_<level> (test/cpp/expf-probe-<level>.cpp, each compiled for its ISA by
// GCC's target pragma, kernels-expf-test.cpp the caller). Only intrinsics and <cstddef> come in under that
// pragma, so no inline function of a standard header is emitted with the ISA's instructions for baseline
// callers to pick. Internal linkage: each probe file has its own copy.
#pragma once

#include <cstddef>

#include "kernels/simd/expf-glibc.h"

namespace tm_test {

// y[i] = expf_glibc(x[i]) on that level; n a multiple of its width (8, 16).
void expf_rows_avx2(const float * x, float * y, size_t n);
void expf_rows_avx512(const float * x, float * y, size_t n);

namespace {

// y[i] = expf_glibc(x[i]); n a multiple of isa::width.
template <typename isa>
void expf_rows(const float * x, float * y, size_t n) {
    for (size_t i = 0; i + isa::width <= n; i += isa::width) isa::store(y + i, tmill::kernels::expf_glibc<isa>(isa::load(x + i)));
}

} // namespace
} // namespace tm_test
