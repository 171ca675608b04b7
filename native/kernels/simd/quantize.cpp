// Activation quantizer for Q8_0/Q4_0 matmuls (kernel_table::quantize_q8_0), once per ISA.
//
// NOTE(quantize): bitwise quant::quantize_row_q8_0, which runs once per activation row of every prompt
// matmul (its scalar nearbyint is a library call per element at the baseline ISA). The same IEEE operations
// in the same order per element: amax of |x| (max is exact, so the lane order is free), d = amax / 127,
// id = 127 / amax (0 for amax == 0), d to F16 by F16C round-to-nearest-even (the library's conversion
// rounds the same way, subnormals included), q = cvtps (MXCSR round-to-nearest-even, as nearbyint in the
// default mode) of x * id; |q| <= 127, so narrowing to bytes never clips.
#include "kernels/simd/isa.h"
#include "quant/q8-0.h"

namespace tmill::kernels::TM_KERNELS_LEVEL {

void quantize_q8_0(const float * x, void * y, int64_t n) {
    // pre: n % 32 == 0 (the matmul that calls this checked n_in against the block size)
    constexpr int n_vec = quant::qk8_0 / isa::width;   // vectors per block
    quant::block_q8_0 * out = static_cast<quant::block_q8_0 *>(y);
    for (int64_t i = 0; i < n / quant::qk8_0; ++i) {
        const float * xb = x + i * quant::qk8_0;
        isa::f32 v[n_vec];
        for (int k = 0; k < n_vec; ++k) v[k] = isa::load(xb + k * isa::width);
        isa::f32 m = isa::abs(v[0]);
        for (int k = 1; k < n_vec; ++k) m = isa::max(m, isa::abs(v[k]));
        const float amax = isa::reduce_max(m);
        const float d = amax / 127.0f;
        const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
        out[i].d = uint16_t(_cvtss_sh(d, _MM_FROUND_TO_NEAREST_INT));
        const isa::f32 vid = isa::set1(id);
        for (int k = 0; k < n_vec; ++k) v[k] = isa::mul(v[k], vid);
        isa::store_q8(out[i].qs, v);
    }
}

} // namespace tmill::kernels::TM_KERNELS_LEVEL
