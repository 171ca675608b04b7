// Row operations (rmsnorm, silu_mul, add), once per ISA: full vectors, then the tail under a lane mask with
// the same per-element operations (so every level gives each element the same bits, except silu_mul's
// exponential, which is each level's llama.cpp expf).
#include "kernels/simd/isa.h"

// libm's expf (what llama.cpp's scalar tails call); declared rather than taken from <cmath>, see below.
extern "C" float expf(float) noexcept;

namespace tmill::kernels::TM_KERNELS_LEVEL {

namespace {

constexpr int W = isa::width;
using vec = isa::f32;

// No <cmath> here: its inline functions would be emitted (weak, in unoptimised builds) with this
// file's ISA flags and could be picked by the linker for baseline callers.
float sqrt1(float v) { return _mm_cvtss_f32(_mm_sqrt_ss(_mm_set_ss(v))); }

} // namespace

// NOTE(rmsnorm): llama.cpp's rms_norm sums the F32 squares in double, left to right; the same sum here
// (a serial double chain: a few µs per row) keeps our normalised activations bitwise equal to its.
void rmsnorm(const float * x, const float * w, float * y, int64_t n, float eps) {
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) sum += double(x[i] * x[i]);
    const float scale = 1.0f / sqrt1(float(sum / double(n)) + eps);
    const vec vs = isa::set1(scale);
    int64_t i = 0;
    for (; i + W <= n; i += W) isa::store(y + i, isa::mul(isa::mul(isa::load(x + i), vs), isa::load(w + i)));
    if (i < n) {
        const isa::mask m = isa::first(n - i);
        isa::store(y + i, isa::mul(isa::mul(isa::load(x + i, m), vs), isa::load(w + i, m)), m);
    }
}

// llama.cpp's swiglu: full W-lane groups through the level's vectorised expf (isa::exp_llama), the tail
// through libm's expf, as ggml_vec_swiglu_f32 does.
void silu_mul(const float * a, const float * b, float * y, int64_t n) {
    const vec one = isa::set1(1.0f);
    int64_t i = 0;
    for (; i + W <= n; i += W) {
        const vec va = isa::load(a + i);
        const vec e = isa::exp_llama(isa::sub(isa::zero(), va));
        isa::store(y + i, isa::mul(isa::div(va, isa::add(one, e)), isa::load(b + i)));
    }
    for (; i < n; ++i) y[i] = a[i] / (1.0f + expf(-a[i])) * b[i];
}

void add(const float * a, const float * b, float * y, int64_t n) {
    int64_t i = 0;
    for (; i + W <= n; i += W) isa::store(y + i, isa::add(isa::load(a + i), isa::load(b + i)));
    if (i < n) {
        const isa::mask m = isa::first(n - i);
        isa::store(y + i, isa::add(isa::load(a + i, m), isa::load(b + i, m)), m);
    }
}

} // namespace tmill::kernels::TM_KERNELS_LEVEL
