// AVX2 + FMA + F16C paged causal attention over an F16 KV cache (kernel_table::attend_f16).
#include "kernels/avx2/avx2.h"
#include "kernels/ref/ref.h"

#include <immintrin.h>

// No <cmath> here (its inline functions could be emitted with this file's ISA flags and picked by the
// linker for baseline callers); glibc's expf is what llama.cpp calls, so scores exponentiate identically.
extern "C" float expf(float) noexcept;

namespace tmill::kernels::avx2 {

namespace {

constexpr int k_chunk = 16;   // keys whose scores are computed before the serial softmax walks them

float round_f16(float x) { return _cvtsh_ss(_cvtss_sh(x, _MM_FROUND_TO_NEAREST_INT)); }
__m256 round_f16(__m256 x) { return _mm256_cvtph_ps(_mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT)); }
__m256 load_f16(const uint16_t * p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i *>(p))); }
float fma1(float a, float b, float c) { return _mm_cvtss_f32(_mm_fmadd_ss(_mm_set_ss(a), _mm_set_ss(b), _mm_set_ss(c))); }

// dot(q16, k) in ggml_vec_dot_f16's AVX2 order: 4 accumulators of 8 lanes over steps of 32 (FMA), reduced
// (a0+a2)+(a1+a3), then halves and two horizontal adds, then the leftovers.
float dot_q_k(const float * q16, const uint16_t * k, int64_t n) {
    const int64_t np = n & ~int64_t(31);
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (int64_t i = 0; i < np; i += 32) {
        a0 = _mm256_fmadd_ps(load_f16(k + i), _mm256_loadu_ps(q16 + i), a0);
        a1 = _mm256_fmadd_ps(load_f16(k + i + 8), _mm256_loadu_ps(q16 + i + 8), a1);
        a2 = _mm256_fmadd_ps(load_f16(k + i + 16), _mm256_loadu_ps(q16 + i + 16), a2);
        a3 = _mm256_fmadd_ps(load_f16(k + i + 24), _mm256_loadu_ps(q16 + i + 24), a3);
    }
    a0 = _mm256_add_ps(_mm256_add_ps(a0, a2), _mm256_add_ps(a1, a3));
    const __m128 t0 = _mm_add_ps(_mm256_castps256_ps128(a0), _mm256_extractf128_ps(a0, 1));
    const __m128 t1 = _mm_hadd_ps(t0, t0);
    const float sum = _mm_cvtss_f32(_mm_hadd_ps(t1, t1));
    // Leftovers: F32 products added left to right in F32 (intrinsics, so the compiler cannot fuse them);
    // ggml's source adds them in double, but node-llama-cpp's logits agree with F32 (checked on
    // stories260K, head_dim 8, where every element is a leftover).
    __m128 s = _mm_set_ss(sum);
    for (int64_t i = np; i < n; ++i) s = _mm_add_ss(s, _mm_mul_ss(_mm_set_ss(_cvtsh_ss(k[i])), _mm_set_ss(q16[i])));
    return _mm_cvtss_f32(s);
}

// acc (n) = f16(acc * s)
void scale_acc(float * acc, float s, int64_t n) {
    const __m256 vs = _mm256_set1_ps(s);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(acc + i, round_f16(_mm256_mul_ps(_mm256_loadu_ps(acc + i), vs)));
    for (; i < n; ++i) acc[i] = round_f16(acc[i] * s);
}

// acc (n) = f16(fma(v, s, acc)), v F16
void mad_acc(float * acc, const uint16_t * v, float s, int64_t n) {
    const __m256 vs = _mm256_set1_ps(s);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(acc + i, round_f16(_mm256_fmadd_ps(load_f16(v + i), vs, _mm256_loadu_ps(acc + i))));
    for (; i < n; ++i) acc[i] = round_f16(fma1(_cvtsh_ss(v[i]), s, acc[i]));
}

} // namespace

// NOTE(attention): the numerics of llama.cpp's CPU flash attention as its AVX2 build runs it (see the
// reference in kernels/ref/attention.cpp): F16 query, dot products in ggml's lane order, online softmax
// with S = fma(S, ms, vs), F16 value accumulator updated with FMA before rounding, out = acc · (1/S).
// Scores of up to 16 keys are computed before the softmax walks them (they do not depend on its state),
// which changes no result but lets the dot products overlap.
void attend_f16(const float * q, int64_t head_dim, float scale, int32_t n_ctx, const int32_t * block_table,
                int32_t block_size, const uint16_t * k_base, const uint16_t * v_base, size_t block_stride,
                size_t slot_stride, float * out, float * scratch) {
    // pre: head_dim >= 1, n_ctx >= 1, block_size >= 1 (the reference checks and throws; no <stdexcept> here)
    if (head_dim < 1 || n_ctx < 1 || block_size < 1) {
        ref::attend_f16(q, head_dim, scale, n_ctx, block_table, block_size, k_base, v_base, block_stride,
                        slot_stride, out, scratch);
        return;
    }
    float * acc = scratch;              // (head_dim) value accumulator, F16-representable values
    float * q16 = scratch + head_dim;   // (head_dim) query rounded to F16
    {
        int64_t i = 0;
        for (; i + 8 <= head_dim; i += 8) {
            _mm256_storeu_ps(q16 + i, round_f16(_mm256_loadu_ps(q + i)));
            _mm256_storeu_ps(acc + i, _mm256_setzero_ps());
        }
        for (; i < head_dim; ++i) { q16[i] = round_f16(q[i]); acc[i] = 0.0f; }
    }

    float m = -__builtin_inff(), sum = 0.0f;
    float sc[k_chunk];            // (k_chunk) scores of the keys in the current chunk
    size_t rows[k_chunk];         // (k_chunk) element offsets of those keys' rows
    for (int32_t j0 = 0; j0 < n_ctx; j0 += k_chunk) {
        const int32_t nj = n_ctx - j0 < k_chunk ? n_ctx - j0 : k_chunk;
        for (int32_t c = 0; c < nj; ++c) {
            const int32_t j = j0 + c;
            rows[c] = size_t(block_table[j / block_size]) * block_stride + size_t(j % block_size) * slot_stride;
            sc[c] = dot_q_k(q16, k_base + rows[c], head_dim) * scale;
        }
        for (int32_t c = 0; c < nj; ++c) {
            float ms = 1.0f, vs;
            if (sc[c] > m) {
                const float m_old = m;
                m = sc[c];
                ms = j0 + c == 0 ? 0.0f : expf(m_old - m);
                // The first key finds acc at zero; a factor of exactly 1 leaves F16 values unchanged.
                if (j0 + c != 0 && ms != 1.0f) scale_acc(acc, ms, head_dim);
                vs = 1.0f;
            } else {
                vs = expf(sc[c] - m);
            }
            mad_acc(acc, v_base + rows[c], vs, head_dim);
            sum = fma1(sum, ms, vs);
        }
    }
    // Multiplied by 1/S, as ggml scales its accumulator (ggml_vec_scale_f32 by S_inv).
    const float inv = 1.0f / sum;
    const __m256 vinv = _mm256_set1_ps(inv);
    int64_t i = 0;
    for (; i + 8 <= head_dim; i += 8) _mm256_storeu_ps(out + i, _mm256_mul_ps(_mm256_loadu_ps(acc + i), vinv));
    for (; i < head_dim; ++i) out[i] = acc[i] * inv;
}

// The heads one after another (no shared loads at this level; AVX-512 machines run the grouped kernel).
void attend_f16_heads(const float * q, int64_t n_heads, int64_t head_dim, float scale, int32_t n_ctx,
                      const int32_t * block_table, int32_t block_size, const uint16_t * k_base, const uint16_t * v_base,
                      size_t block_stride, size_t slot_stride, float * out, float * scratch) {
    // pre: n_heads >= 1 and attend_f16's (the reference checks and throws)
    if (n_heads < 1 || head_dim < 1 || n_ctx < 1 || block_size < 1) {
        ref::attend_f16_heads(q, n_heads, head_dim, scale, n_ctx, block_table, block_size, k_base, v_base,
                              block_stride, slot_stride, out, scratch);
        return;
    }
    for (int64_t g = 0; g < n_heads; ++g)
        attend_f16(q + g * head_dim, head_dim, scale, n_ctx, block_table, block_size, k_base, v_base, block_stride,
                   slot_stride, out + g * head_dim, scratch);
}

} // namespace tmill::kernels::avx2
