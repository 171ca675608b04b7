// dot(a, b) in ggml_vec_dot_f32 / ggml_vec_dot_f16's order for the ISA's vector width W (GGML_F32_STEP /
// GGML_F16_STEP = 4W): four accumulators over steps of 4W (FMA), reduced (s0+s2)+(s1+s3), then the
// level's GGML_F32_VEC_REDUCE ending (isa::reduce_add_ggml), then the n % 4W leftovers one by one.
// Internal linkage, as tiling.h.
#pragma once

#include <cstdint>

namespace tmill::kernels {
namespace {

// L::vec(p, i): W floats of row p from element i; L::one(p, i): element i as float.
template <typename V, typename LA, typename LB>
float ggml_dot_lanes(const void * a, const void * b, int64_t np) {
    constexpr int W = V::width;
    typename V::f32 s0 = V::zero(), s1 = s0, s2 = s0, s3 = s0;
    for (int64_t i = 0; i < np; i += 4 * W) {
        s0 = V::fmadd(LA::vec(a, i), LB::vec(b, i), s0);
        s1 = V::fmadd(LA::vec(a, i + W), LB::vec(b, i + W), s1);
        s2 = V::fmadd(LA::vec(a, i + 2 * W), LB::vec(b, i + 2 * W), s2);
        s3 = V::fmadd(LA::vec(a, i + 3 * W), LB::vec(b, i + 3 * W), s3);
    }
    return V::reduce_add_ggml(V::add(V::add(s0, s2), V::add(s1, s3)));
}

// ggml_vec_dot_f32's leftovers: F32 FMAs in index order (the compiler contracts ggml's `sumf += x[i]*y[i]`).
template <typename V, typename LA, typename LB>
float ggml_dot_f32(const void * a, const void * b, int64_t n) {
    const int64_t np = n / (4 * V::width) * (4 * V::width);
    __m128 sum = _mm_set_ss(ggml_dot_lanes<V, LA, LB>(a, b, np));
    for (int64_t i = np; i < n; ++i) sum = _mm_fmadd_ss(_mm_set_ss(LA::one(a, i)), _mm_set_ss(LB::one(b, i)), sum);
    return _mm_cvtss_f32(sum);
}

} // namespace
} // namespace tmill::kernels
