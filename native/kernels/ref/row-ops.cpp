// Reference row operations of the forward pass. Reductions accumulate in double, in index order.
#include "base/error.h"
#include "kernels/ref/ref.h"

#include <cmath>
#include <string>

namespace tmill::kernels::ref {

void rmsnorm(const float * x, const float * w, float * y, int64_t n, float eps) {
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) sum += double(x[i] * x[i]);   // F32 squares, summed in double (llama.cpp)
    const float scale = 1.0f / std::sqrt(float(sum / double(n)) + eps);
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] * scale * w[i];
}

void silu_mul(const float * a, const float * b, float * y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = a[i] / (1.0f + std::exp(-a[i])) * b[i];
}

void add(const float * a, const float * b, float * y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = a[i] + b[i];
}

// NOTE(rope): the angles follow ggml's recurrence (theta_0 = pos, theta_{i+1} = theta_i * base^(-2/n_rot),
// each scaled by freq_scale) so positions rotate as llama.cpp rotates them; the cos/sin cache is
// computed once per row and shared by all heads. The SIMD levels go through rope_rows, which uses the
// same two helpers, so every level rotates by bitwise the same cos/sin.
namespace {

float rope_theta_scale(int64_t head_dim, int64_t n_rot, float freq_base) {
    TM_CHECK(n_rot >= 0 && n_rot % 2 == 0 && n_rot <= head_dim && n_rot <= k_rope_max_rot, invalid_argument,
             "rope: n_rot must be even, <= head_dim and <= " + std::to_string(k_rope_max_rot));
    return std::pow(freq_base, -2.0f / float(n_rot));
}

// ggml divides the running theta by the pair's frequency factor before scaling it (rope_yarn's theta_extrap);
// a factor of 1 divides exactly, so files without factors rotate as before.
void rope_angles(int32_t pos, float theta_scale, float freq_scale, const float * freq_factors, int64_t half,
                 float * cos_out, float * sin_out) {
    float theta = float(pos);
    for (int64_t i = 0; i < half; ++i) {
        const float ff = freq_factors ? freq_factors[i] : 1.0f;
        const float angle = freq_scale * (theta / ff);
        cos_out[i] = std::cos(angle);
        sin_out[i] = std::sin(angle);
        theta *= theta_scale;
    }
}

} // namespace

void rope(float * x, int64_t n_rows, int64_t n_head, int64_t head_dim, int64_t n_rot, const int32_t * pos,
          float freq_base, float freq_scale, const float * freq_factors, rope_style style) {
    const float theta_scale = rope_theta_scale(head_dim, n_rot, freq_base);
    float cos_cache[k_rope_max_rot / 2], sin_cache[k_rope_max_rot / 2];  // (n_rot / 2)
    const int64_t half = n_rot / 2;
    for (int64_t r = 0; r < n_rows; ++r) {
        rope_angles(pos[r], theta_scale, freq_scale, freq_factors, half, cos_cache, sin_cache);
        for (int64_t h = 0; h < n_head; ++h) {
            float * v = x + (r * n_head + h) * head_dim;
            for (int64_t i = 0; i < half; ++i) {
                const int64_t i0 = style == rope_style::neox ? i : 2 * i;
                const int64_t i1 = style == rope_style::neox ? i + half : 2 * i + 1;
                const float x0 = v[i0], x1 = v[i1];
                v[i0] = std::fma(x0, cos_cache[i], -(x1 * sin_cache[i]));
                v[i1] = std::fma(x0, sin_cache[i], x1 * cos_cache[i]);
            }
        }
    }
}

void rope_rows(float * x, int64_t n_rows, int64_t n_head, int64_t head_dim, int64_t n_rot, const int32_t * pos,
               float freq_base, float freq_scale, const float * freq_factors, rope_style style,
               rope_rotate_fn rotate_normal, rope_rotate_fn rotate_neox) {
    const float theta_scale = rope_theta_scale(head_dim, n_rot, freq_base);
    const int64_t half = n_rot / 2;
    float cos1[k_rope_max_rot / 2], sin1[k_rope_max_rot / 2];   // (half)
    float cos2[k_rope_max_rot], sin2[k_rope_max_rot];           // (n_rot): normal style's doubled copies
    for (int64_t r = 0; r < n_rows; ++r) {
        rope_angles(pos[r], theta_scale, freq_scale, freq_factors, half, cos1, sin1);
        float * row = x + r * n_head * head_dim;
        if (style == rope_style::neox) {
            for (int64_t h = 0; h < n_head; ++h) rotate_neox(row + h * head_dim, half, cos1, sin1);
            continue;
        }
        for (int64_t i = 0; i < half; ++i) {
            cos2[2 * i] = cos2[2 * i + 1] = cos1[i];
            sin2[2 * i] = sin2[2 * i + 1] = sin1[i];
        }
        for (int64_t h = 0; h < n_head; ++h) rotate_normal(row + h * head_dim, n_rot, cos2, sin2);
    }
}

} // namespace tmill::kernels::ref
