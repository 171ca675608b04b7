// The scalar reference of the block-step numerics (kernels/block-step/step.h; kernels/ref/matmul-q8-block-step.cpp,
// baseline C++ in tm_core): the bits the avx512 level's kernels for these weight types
// (kernels/simd/avx512-block-step.h, avx512-block-step-min.h) and the AMX tiles (kernels/amx/matmul-q8-0.cpp) must give, and what they
// run when their scratch buffers cannot be allocated.
#pragma once

#include "kernels/kernels.h"

namespace tmill::kernels::block_step_ref {
matmul_rows_kernel matmul_q8_0;
matmul_rows_kernel matmul_q4_0;
matmul_rows_kernel matmul_iq4_nl;
matmul_rows_kernel matmul_q5_0;
// Against Q8_1 activations, with the minimum (block_step_min).
matmul_rows_kernel matmul_q4_1;
matmul_rows_kernel matmul_q5_1;
// Q6_K against Q8_K, one exact sum per super-block (block_step_k).
matmul_rows_kernel matmul_q6_k;
// Q6_K rows repacked 16 at a time (quant/q6-k-x16.h): the avx512 level's matmul_q6_k_x16.
matmul_rows_kernel matmul_q6_k_x16;
// Q8_0 rows repacked 16 at a time (quant/q8-0-x16.h): the AMX level's matmul_q8_0_x16.
matmul_rows_kernel matmul_q8_0_x16;
// Q4_1 rows repacked 16 at a time (quant/q4-1-x16.h): the avx512 level's matmul_q4_1_x16.
matmul_rows_kernel matmul_q4_1_x16;
// Q4_0 and IQ4_NL rows repacked 16 at a time (quant/q4-0-x16.h): the avx512 level's matmul_q4_0_x16 and
// matmul_iq4_nl_x16.
matmul_rows_kernel matmul_q4_0_x16;
matmul_rows_kernel matmul_iq4_nl_x16;
// Q5_0 rows repacked 16 at a time (quant/q5-0-x16.h): the avx512 level's matmul_q5_0_x16.
matmul_rows_kernel matmul_q5_0_x16;
} // namespace tmill::kernels::block_step_ref
