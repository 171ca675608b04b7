// Fills the kernel table with the AVX-512 variants (every entry).
#include "kernels/avx512/avx512.h"

namespace tmill::kernels::avx512 {

void fill(kernel_table & t) {
    t.matmul_f32 = matmul_rows_f32;
    t.matmul_f16 = matmul_rows_f16;
    t.matmul_bf16 = matmul_rows_bf16;
    t.matmul_q8_0 = matmul_rows_q8_0;
    t.matmul_q4_0 = matmul_rows_q4_0;
    t.matmul_q4_k = matmul_rows_q4_k;
    t.matmul_q5_k = matmul_rows_q5_k;
    t.matmul_q6_k = matmul_rows_q6_k;
    t.quantize_q8_0 = quantize_q8_0;
    t.rmsnorm = rmsnorm;
    t.softmax = softmax;
    t.silu_mul = silu_mul;
    t.add = add;
    t.rope = rope;
    t.dot_f32 = dot_f32;
    t.axpy_f32 = axpy_f32;
    t.dot_f32_f16 = dot_f32_f16;
    t.axpy_f16 = axpy_f16;
    t.attend_f16 = attend_f16;
    t.attend_f16_heads = attend_f16_heads;
}

} // namespace tmill::kernels::avx512
