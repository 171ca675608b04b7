// The scalar reference of the BF16 pair-dot numerics (NOTE(bf16-dot), kernels/simd/avx512-bf16-dot.h): the bits the
// avx512 level's matmul_bf16_dot must give, on a CPU with AVX512-BF16 and under emulation.
#include "kernels/bf16-dot-step.h"
#include "kernels/kernels.h"
#include "kernels/lane-sum-16.h"
#include "quant/fp16.h"

namespace tmill::kernels::ref {

namespace {

constexpr int k_lanes = 16;
constexpr int64_t k_step = 2 * k_lanes;   // BF16 elements per VDPBF16PS

// acc[j] = VDPBF16PS(acc, a[i..i+32), b[i..i+32)) lane j, for each lane.
void dot_step(float * acc, const uint16_t * a, const uint16_t * b) {
    for (int j = 0; j < k_lanes; ++j) acc[j] = bf16_dot_step::lane(acc[j], a, b, j);
}

float dot(const uint16_t * w, const uint16_t * x, int64_t n) {
    if (n % k_step == 0) {
        // tinyBLAS's order: one accumulator over the whole row.
        float acc[k_lanes] = {};
        for (int64_t i = 0; i < n; i += k_step) dot_step(acc, w + i, x + i);
        return lane_sum_16(acc);
    }
    // ggml_vec_dot_bf16's: two accumulators over steps of 64, their sums and the leftover products in double.
    float c1[k_lanes] = {}, c2[k_lanes] = {};
    int64_t i = 0;
    for (; i + 2 * k_step <= n; i += 2 * k_step) {
        dot_step(c1, w + i, x + i);
        dot_step(c2, w + i + k_step, x + i + k_step);
    }
    double sum = 0.0;
    sum += double(lane_sum_16(c1));
    sum += double(lane_sum_16(c2));
    for (; i < n; ++i) sum += double(quant::bf16_to_fp32(w[i]) * quant::bf16_to_fp32(x[i]));
    return float(sum);
}

} // namespace

void matmul_bf16_dot(const void * w, size_t wb, const void * x, size_t xb, int64_t n_tok, int64_t n_in, int64_t r0, int64_t r1,
                     float * y, int64_t ldy) {
    for (int64_t t = 0; t < n_tok; ++t) {
        const auto * xr = reinterpret_cast<const uint16_t *>(static_cast<const char *>(x) + size_t(t) * xb);
        for (int64_t r = r0; r < r1; ++r)
            y[t * ldy + r] = dot(reinterpret_cast<const uint16_t *>(static_cast<const char *>(w) + size_t(r) * wb), xr, n_in);
    }
}

} // namespace tmill::kernels::ref
