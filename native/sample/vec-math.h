// Row-wide math for the sampler at the baseline ISA (SSE2 on x86-64; a scalar loop elsewhere).
// exp_approx is exact at -inf (returns 0) and within ~2 ulp elsewhere, which is well below what a
// sampling decision or a reported logprob (float) can resolve; it replaces libm's scalar exp in the
// passes that run over the whole vocabulary once per token.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>

namespace tmill {

// e^x for x ≤ 0 (arguments are always logit − max); x < −87 underflows to 0.
inline float exp_approx(float x) {
    const float t = x * 1.44269504088896341f;                  // x·log2(e)
    const float tc = t < -126.0f ? -126.0f : t;                // keep the exponent field valid
    const float fi = (tc + 12582912.0f) - 12582912.0f;         // round to nearest (|tc| < 2^22)
    // x − fi·ln2 with ln2 split in two (Cody–Waite) so large |x| keeps its precision; |f| ≤ ln2/2
    const float f = (x - fi * 0.693145751953125f) - fi * 1.428606765330187e-06f;
    // e^f, Taylor to degree 7: relative error < 2e-8 on |f| ≤ 0.347
    float p = 1.0f / 5040.0f;
    p = p * f + 1.0f / 720.0f;
    p = p * f + 1.0f / 120.0f;
    p = p * f + 1.0f / 24.0f;
    p = p * f + 1.0f / 6.0f;
    p = p * f + 0.5f;
    p = p * f + 1.0f;
    p = p * f + 1.0f;
    const int32_t bits = ((int32_t)fi + 127) << 23;
    float scale;
    std::memcpy(&scale, &bits, sizeof scale);
    return t < -126.0f ? 0.0f : p * scale;
}

// Largest entry (-inf for an all -inf row). NaN entries are not supported.
float row_max(const float * row, int32_t n);

// Index of the first entry equal to the row's largest (torch.argmax's tie rule). pre: n ≥ 1.
int32_t row_argmax(const float * row, int32_t n);

// row[i] = -inf wherever row[i] < threshold.
void mask_below(float * row, int32_t n, float threshold);

// Number of entries ≥ v.
int32_t count_at_least(const float * row, int32_t n, float v);

// Σ e^(row[i] − mx), exp_approx per term; when out is non-null it receives each term.
// pre: mx finite. SSE2 (the x86-64 baseline) when available, else the scalar loop.
double sum_exp(const float * row, int32_t n, float mx, float * out);

} // namespace tmill
