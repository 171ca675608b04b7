// tm_test::expf_rows_avx2: test/cpp/expf-probe.h over the AVX2 traits, compiled for AVX2.
#pragma GCC target("avx2,fma,f16c,bmi2")

#include <immintrin.h>

#include "kernels/simd/avx2-traits.h"
#include "expf-probe.h"

void tm_test::expf_rows_avx2(const float * x, float * y, size_t n) { expf_rows<tmill::kernels::avx2_traits>(x, y, n); }
