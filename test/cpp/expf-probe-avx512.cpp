// tm_test::expf_rows_avx512: test/cpp/expf-probe.h over the AVX-512 traits, compiled for AVX-512.
#pragma GCC target("avx2,fma,f16c,bmi2,avx512f,avx512bw,avx512vl,avx512dq,avx512vnni")

#include <immintrin.h>

#include "kernels/simd/avx512-traits.h"
#include "expf-probe.h"

void tm_test::expf_rows_avx512(const float * x, float * y, size_t n) { expf_rows<tmill::kernels::avx512_traits>(x, y, n); }
