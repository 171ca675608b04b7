// Rope, once per ISA: bitwise ref::rope. The row loop and the angles are the reference's (ref::rope_rows: one
// libm cos/sin per pair and row, shared by all heads); only the rotation runs in vectors, W/2 pairs (normal)
// or W pairs (neox) at a time, the tail under a lane mask, with the same per-element operations:
// fma(x0, c, -(x1*s)) and fma(x0, s, x1*c): ggml's rotate_pairs as GCC compiles it for FMA builds (the first
// product of each expression fused, the second rounded), measured against the zen4 build's ggml_rope_ext.
#include "kernels/simd/isa.h"
#include "kernels/ref/ref.h"

// These files are compiled with -mfma, and GCC would contract products into FMAs of its own choosing even
// through the vector intrinsics: contraction off leaves exactly the FMAs written here. (The tails run the
// vector code under a mask, so no scalar arithmetic is left for the auto-vectoriser to fuse.)
#pragma GCC optimize("fp-contract=off")

namespace tmill::kernels::TM_KERNELS_LEVEL {

namespace {

constexpr int W = isa::width;
using vec = isa::f32;

// Pairs (2i, 2i+1). cos2/sin2 hold each pair's cos/sin twice (lanes 2i and 2i+1), so one vector covers
// W/2 pairs: lane 2i gets x0*c - x1*s and lane 2i+1 gets x1*c + x0*s.
// Even lanes fma(x0, c, -(x1*s)), odd lanes fma(x0, s, x1*c) (x0 the pair's even element, x1 its odd one).
vec rotate_normal_vec(vec a, vec c, vec s) {
    const vec sw = isa::swap_pairs(a);   // x1 in even lanes, x0 in odd lanes
    const vec neg = isa::set1(-1.0f);
    const vec even = isa::fmadd(a, c, isa::mul(isa::mul(sw, s), neg));
    const vec odd = isa::fmadd(sw, s, isa::mul(a, c));
    return isa::even_odd(even, odd);
}

void rotate_normal(float * v, int64_t n_rot, const float * cos2, const float * sin2) {
    int64_t j = 0;
    for (; j + W <= n_rot; j += W)
        isa::store(v + j, rotate_normal_vec(isa::load(v + j), isa::load(cos2 + j), isa::load(sin2 + j)));
    if (j < n_rot) {
        const isa::mask m = isa::first(n_rot - j);
        isa::store(v + j, rotate_normal_vec(isa::load(v + j, m), isa::load(cos2 + j, m), isa::load(sin2 + j, m)), m);
    }
}

// Pairs (i, i + half): both halves are contiguous, W pairs a vector.
void rotate_neox_vec(float * v, float * w, isa::mask m, const float * cos1, const float * sin1) {
    const vec x0 = isa::load(v, m), x1 = isa::load(w, m);
    const vec c = isa::load(cos1, m), s = isa::load(sin1, m);
    isa::store(v, isa::fmadd(x0, c, isa::mul(isa::mul(x1, s), isa::set1(-1.0f))), m);
    isa::store(w, isa::fmadd(x0, s, isa::mul(x1, c)), m);
}

void rotate_neox(float * v, int64_t half, const float * cos1, const float * sin1) {
    int64_t i = 0;
    for (; i + W <= half; i += W) rotate_neox_vec(v + i, v + half + i, isa::first(W), cos1 + i, sin1 + i);
    if (i < half) rotate_neox_vec(v + i, v + half + i, isa::first(half - i), cos1 + i, sin1 + i);
}

} // namespace

void rope(float * x, int64_t n_rows, int64_t n_head, int64_t head_dim, int64_t n_rot, const int32_t * pos,
          float freq_base, float freq_scale, const float * freq_factors, rope_style style) {
    ref::rope_rows(x, n_rows, n_head, head_dim, n_rot, pos, freq_base, freq_scale, freq_factors, style, rotate_normal,
                   rotate_neox);
}

} // namespace tmill::kernels::TM_KERNELS_LEVEL
