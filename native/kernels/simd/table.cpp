// Fills the kernel table with this ISA's kernels (every entry of kernels/entries.h).
#include "kernels/simd/isa.h"

namespace tmill::kernels::TM_KERNELS_LEVEL {

void fill(kernel_table & t) {
    TM_KERNEL_FILL_BODY
    t.q4_k_x16 = int_dots::q4_k_x16;
    // Q4_1, Q4_0, IQ4_NL and Q5_0 in their 16-row layouts: avx2's kernels in llama.cpp's order (NOTE(nibble-x16-avx2)),
    // the AVX-512 lanes (NOTE(nibble-x16)).
    t.q4_1_x16 = true;
    t.matmul_q4_1_x16 = matmul_q4_1_x16;
    t.q4_0_x16 = true;
    t.matmul_q4_0_x16 = matmul_q4_0_x16;
    t.matmul_iq4_nl_x16 = matmul_iq4_nl_x16;
    t.q5_0_x16 = true;
    t.matmul_q5_0_x16 = matmul_q5_0_x16;
#if defined(TM_KERNELS_AVX512_X16)
    t.q6_k_x16 = true;
    t.matmul_q6_k_x16 = matmul_q6_k_x16;
    t.q8_0_x16 = true;
    t.matmul_q8_0_x16 = matmul_q8_0_x16;
#endif
}

} // namespace tmill::kernels::TM_KERNELS_LEVEL
