// The kernel table's entries, one line each: X(name, function type). kernel_table gets a member per line,
// every level (ref, avx2, avx512, ...) a declaration `type name;` and a fill that sets it, so adding an
// entry is one line here plus its definition in each level's family source. The function types and their
// contracts are in kernels/kernels.h.
#pragma once

#define TM_KERNEL_ENTRIES(X)                    \
    X(matmul_f32, matmul_rows_kernel)           \
    X(matmul_f16, matmul_rows_kernel)           \
    X(matmul_bf16, matmul_rows_kernel)          \
    X(matmul_q8_0, matmul_rows_kernel)          \
    X(matmul_q4_0, matmul_rows_kernel)          \
    X(matmul_q4_1, matmul_rows_kernel)          \
    X(matmul_q5_0, matmul_rows_kernel)          \
    X(matmul_q5_1, matmul_rows_kernel)          \
    X(matmul_iq4_nl, matmul_rows_kernel)        \
    X(matmul_q2_k, matmul_rows_kernel)          \
    X(matmul_q3_k, matmul_rows_kernel)          \
    X(matmul_q4_k, matmul_rows_kernel)          \
    X(matmul_q4_k_x16, matmul_rows_kernel)      \
    X(matmul_q5_k, matmul_rows_kernel)          \
    X(matmul_q6_k, matmul_rows_kernel)          \
    X(matmul_iq4_xs, matmul_rows_kernel)        \
    X(quantize_q8_0, quantize_kernel)           \
    X(quantize_q8_1, quantize_kernel)           \
    X(quantize_q8_k, quantize_kernel)           \
    X(quantize_f16, quantize_kernel)            \
    X(rmsnorm, rmsnorm_kernel)                  \
    X(silu_mul, binary_kernel)                  \
    X(add, binary_kernel)                       \
    X(rope, rope_kernel)                        \
    X(attend_f16, attend_kernel)                \
    X(attend_f16_heads, attend_heads_kernel)

// Inside a level's namespace: its declarations and its fill.
#define TM_KERNEL_DECLARE_ENTRY(name, type) type name;
#define TM_KERNEL_DECLARE_LEVEL                 \
    TM_KERNEL_ENTRIES(TM_KERNEL_DECLARE_ENTRY)  \
    void fill(kernel_table & t);

// The body of a level's fill (kernels/ref/table.cpp, kernels/simd/table.cpp).
#define TM_KERNEL_FILL_ENTRY(name, type) t.name = name;
#define TM_KERNEL_FILL_BODY TM_KERNEL_ENTRIES(TM_KERNEL_FILL_ENTRY)
