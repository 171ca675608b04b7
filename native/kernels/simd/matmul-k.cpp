// Matmul rows for Q4_K, Q5_K and Q6_K weights against Q8_K activations, once per ISA.
//
// NOTE(k-matmul): per (row, token) pair and super-block the scaled integer sums are exact and are converted
// once, then added with weight (d_w * d_x) to a float accumulator; the Q4_K/Q5_K mins are accumulated apart
// and subtracted at the end; Q6_K's -32 offset is folded into the integer sums. Q4_K and Q6_K accumulate as
// llama.cpp's x86 builds do (kernels/ref/matmul-k.cpp, NOTE(k-matmul-ggml)), so every level gives the
// reference's bits; Q5_K's float accumulator width is the ISA's (int_dots: 32 weights a register on AVX2,
// 64 with VNNI on AVX-512), so its levels may differ in the last bits. The sequence per pair is the same in
// every tile shape (batch invariance). One row per tile, up to 4 tokens share each unpacked weight chunk.
#include "kernels/simd/isa.h"
#include "kernels/tiling.h"

namespace tmill::kernels::TM_KERNELS_LEVEL {

namespace {

template <int R, int T>
struct q4_k_kernel {
    static void fn(const char * w, size_t wb, const char * x, size_t xb, int64_t n, float * y, int64_t ldy) {
        int_dots::tile_k4<quant::block_q4_k, false, R, T>(w, wb, x, xb, n, y, ldy);
    }
};
template <int R, int T>
struct q5_k_kernel {
    static void fn(const char * w, size_t wb, const char * x, size_t xb, int64_t n, float * y, int64_t ldy) {
        int_dots::tile_k4<quant::block_q5_k, true, R, T>(w, wb, x, xb, n, y, ldy);
    }
};
template <int R, int T>
struct q6_k_kernel {
    static void fn(const char * w, size_t wb, const char * x, size_t xb, int64_t n, float * y, int64_t ldy) {
        int_dots::tile_q6_k<R, T>(w, wb, x, xb, n, y, ldy);
    }
};

} // namespace

TM_MATMUL_ROWS_ENTRY(matmul_q4_k, tile_walk<q4_k_kernel, 1, 1>)
TM_MATMUL_ROWS_ENTRY(matmul_q5_k, tile_walk<q5_k_kernel, 1, 1>)
TM_MATMUL_ROWS_ENTRY(matmul_q6_k, tile_walk<q6_k_kernel, 1, 1>)

} // namespace tmill::kernels::TM_KERNELS_LEVEL
