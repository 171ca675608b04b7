// Fills the kernel table with the scalar reference kernels: every entry of kernels/entries.h, and the block-step
// references of the Q8_0, Q6_K, Q4_1, Q4_0, IQ4_NL and Q5_0 16-row layouts (kernel_table::matmul_q8_0_x16, which only the
// AMX level replaces, and matmul_q6_k_x16 and the 4-bit layouts' entries, which the avx512 level replaces and the AMX
// level in part).
#include "kernels/block-step/reference.h"
#include "kernels/kernels.h"

namespace tmill::kernels::ref {

void fill(kernel_table & t) {
    TM_KERNEL_FILL_BODY
    t.matmul_q8_0_x16 = block_step_ref::matmul_q8_0_x16;
    t.matmul_q6_k_x16 = block_step_ref::matmul_q6_k_x16;
    t.matmul_q4_1_x16 = block_step_ref::matmul_q4_1_x16;
    t.matmul_q4_0_x16 = block_step_ref::matmul_q4_0_x16;
    t.matmul_iq4_nl_x16 = block_step_ref::matmul_iq4_nl_x16;
    t.matmul_q5_0_x16 = block_step_ref::matmul_q5_0_x16;
}

} // namespace tmill::kernels::ref
