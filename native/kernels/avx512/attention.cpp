// AVX-512 paged causal attention over an F16 KV cache (kernel_table::attend_f16).
#include "kernels/avx512/avx512.h"
#include "kernels/ref/ref.h"

#include <immintrin.h>

// No <cmath> here (its inline functions could be emitted with this file's ISA flags and picked by the
// linker for baseline callers); glibc's expf is what llama.cpp calls, so scores exponentiate identically.
extern "C" float expf(float) noexcept;

namespace tmill::kernels::avx512 {

namespace {

constexpr int k_chunk = k_attend_key_chunk;   // keys whose scores are computed before the serial softmax walks them

float round_f16(float x) { return _cvtsh_ss(_cvtss_sh(x, _MM_FROUND_TO_NEAREST_INT)); }
__m256 round_f16(__m256 x) { return _mm256_cvtph_ps(_mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT)); }
__m256 load_f16(const uint16_t * p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i *>(p))); }
float fma1(float a, float b, float c) { return _mm_cvtss_f32(_mm_fmadd_ss(_mm_set_ss(a), _mm_set_ss(b), _mm_set_ss(c))); }

__m512 round_f16(__m512 x) { return _mm512_cvtph_ps(_mm512_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT)); }
__m512 load16_f16(const uint16_t * p) { return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(p))); }

// dot(q16, k) in ggml_vec_dot_f16's AVX-512 order: 4 accumulators of 16 lanes over steps of 64 (FMA),
// reduced (a0+a2)+(a1+a3), then _mm512_reduce_add_ps, then the leftovers.
float dot_q_k(const float * q16, const uint16_t * k, int64_t n) {
    const int64_t np = n & ~int64_t(63);
    __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (int64_t i = 0; i < np; i += 64) {
        a0 = _mm512_fmadd_ps(load16_f16(k + i), _mm512_loadu_ps(q16 + i), a0);
        a1 = _mm512_fmadd_ps(load16_f16(k + i + 16), _mm512_loadu_ps(q16 + i + 16), a1);
        a2 = _mm512_fmadd_ps(load16_f16(k + i + 32), _mm512_loadu_ps(q16 + i + 32), a2);
        a3 = _mm512_fmadd_ps(load16_f16(k + i + 48), _mm512_loadu_ps(q16 + i + 48), a3);
    }
    const float sum = _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a2), _mm512_add_ps(a1, a3)));
    // Leftovers: F32 products added left to right in F32 (intrinsics, so the compiler cannot fuse them);
    // ggml's source adds them in double, but node-llama-cpp's logits agree with F32 (checked on
    // stories260K, head_dim 8, where every element is a leftover).
    __m128 s = _mm_set_ss(sum);
    for (int64_t i = np; i < n; ++i) s = _mm_add_ss(s, _mm_mul_ss(_mm_set_ss(_cvtsh_ss(k[i])), _mm_set_ss(q16[i])));
    return _mm_cvtss_f32(s);
}

// acc (n) = f16(acc * s)
void scale_acc(float * acc, float s, int64_t n) {
    const __m512 vs16 = _mm512_set1_ps(s);
    const __m256 vs = _mm256_set1_ps(s);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(acc + i, round_f16(_mm512_mul_ps(_mm512_loadu_ps(acc + i), vs16)));
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(acc + i, round_f16(_mm256_mul_ps(_mm256_loadu_ps(acc + i), vs)));
    for (; i < n; ++i) acc[i] = round_f16(acc[i] * s);
}

// acc (n) = f16(fma(v, s, acc)), v F16
void mad_acc(float * acc, const uint16_t * v, float s, int64_t n) {
    const __m512 vs16 = _mm512_set1_ps(s);
    const __m256 vs = _mm256_set1_ps(s);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(acc + i, round_f16(_mm512_fmadd_ps(load16_f16(v + i), vs16, _mm512_loadu_ps(acc + i))));
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(acc + i, round_f16(_mm256_fmadd_ps(load_f16(v + i), vs, _mm256_loadu_ps(acc + i))));
    for (; i < n; ++i) acc[i] = round_f16(fma1(_cvtsh_ss(v[i]), s, acc[i]));
}

// dot_q_k with the key row already converted to F32 (exact, so the same value): the same lanes, FMAs,
// reduction and leftovers in the same order.
float dot_q_kf(const float * q16, const float * k, int64_t n) {
    const int64_t np = n & ~int64_t(63);
    __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (int64_t i = 0; i < np; i += 64) {
        a0 = _mm512_fmadd_ps(_mm512_loadu_ps(k + i), _mm512_loadu_ps(q16 + i), a0);
        a1 = _mm512_fmadd_ps(_mm512_loadu_ps(k + i + 16), _mm512_loadu_ps(q16 + i + 16), a1);
        a2 = _mm512_fmadd_ps(_mm512_loadu_ps(k + i + 32), _mm512_loadu_ps(q16 + i + 32), a2);
        a3 = _mm512_fmadd_ps(_mm512_loadu_ps(k + i + 48), _mm512_loadu_ps(q16 + i + 48), a3);
    }
    const float sum = _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a2), _mm512_add_ps(a1, a3)));
    __m128 s = _mm_set_ss(sum);
    for (int64_t i = np; i < n; ++i) s = _mm_add_ss(s, _mm_mul_ss(_mm_set_ss(k[i]), _mm_set_ss(q16[i])));
    return _mm_cvtss_f32(s);
}

// mad_acc with the value row already converted to F32: acc (n) = f16(fma(v, s, acc)).
void mad_acc_f(float * acc, const float * v, float s, int64_t n) {
    const __m512 vs16 = _mm512_set1_ps(s);
    const __m256 vs = _mm256_set1_ps(s);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(acc + i, round_f16(_mm512_fmadd_ps(_mm512_loadu_ps(v + i), vs16, _mm512_loadu_ps(acc + i))));
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(acc + i, round_f16(_mm256_fmadd_ps(_mm256_loadu_ps(v + i), vs, _mm256_loadu_ps(acc + i))));
    for (; i < n; ++i) acc[i] = round_f16(fma1(v[i], s, acc[i]));
}

// dst (n) F32 = src (n) F16, exactly.
void convert_row(const uint16_t * src, float * dst, int64_t n) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(dst + i, load16_f16(src + i));
    for (; i < n; ++i) dst[i] = _cvtsh_ss(src[i]);
}

} // namespace

// NOTE(attention): the numerics of llama.cpp's CPU flash attention as its AVX-512 build runs it (see the
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

namespace {

// One step of attend_f16's online softmax for one head: score s against running max m and sum S;
// returns vs and sets ms (the factor acc was scaled by; a new maximum rescales acc here).
inline float softmax_step(float s, bool first, float & m, float & sum, float * acc, int64_t hd, float & ms) {
    float vs;
    ms = 1.0f;
    if (s > m) {
        const float m_old = m;
        m = s;
        ms = first ? 0.0f : expf(m_old - s);
        // The first key finds acc at zero; a factor of exactly 1 leaves F16 values unchanged.
        if (!first && ms != 1.0f) scale_acc(acc, ms, hd);
        vs = 1.0f;
    } else {
        vs = expf(s - m);
    }
    return vs;
}

// The grouped kernel for head_dim = 16 * NV (NV a multiple of 4: dot_q_k has no leftovers), or any
// head_dim when NV == 0. With NV > 0 each key and value row lives in NV registers while the heads use it
// and the loops are unrolled; the operations and their order are dot_q_k's and mad_acc's.
template <int NV>
void attend_heads(const float * q, int64_t n_heads, int64_t head_dim, float scale, int32_t n_ctx,
                  const int32_t * block_table, int32_t block_size, const uint16_t * k_base, const uint16_t * v_base,
                  size_t block_stride, size_t slot_stride, float * out, float * scratch) {
    static_assert(NV % 4 == 0, "head_dim must be a multiple of 64");
    const int64_t hd = NV > 0 ? int64_t(16 * NV) : head_dim;
    float * acc = scratch;                  // (n_heads, head_dim) value accumulators, F16-representable values
    float * q16 = acc + n_heads * hd;       // (n_heads, head_dim) queries rounded to F16
    float * sc = q16 + n_heads * hd;        // (n_heads, k_chunk) scores of the current chunk's keys
    float * m = sc + n_heads * k_chunk;     // (n_heads) running maxima
    float * sum = m + n_heads;              // (n_heads) running sums S
    float * row = sum + n_heads;            // (head_dim) the key or value row being used, as F32 (NV == 0)
    for (int64_t g = 0; g < n_heads; ++g) {
        const float * qg = q + g * hd;
        float * q16g = q16 + g * hd;
        float * accg = acc + g * hd;
        int64_t i = 0;
        for (; i + 8 <= hd; i += 8) {
            _mm256_storeu_ps(q16g + i, round_f16(_mm256_loadu_ps(qg + i)));
            _mm256_storeu_ps(accg + i, _mm256_setzero_ps());
        }
        for (; i < hd; ++i) { q16g[i] = round_f16(qg[i]); accg[i] = 0.0f; }
        m[g] = -__builtin_inff();
        sum[g] = 0.0f;
    }

    size_t rows[k_chunk];   // (k_chunk) element offsets of the current chunk's key/value rows
    for (int32_t j0 = 0; j0 < n_ctx; j0 += k_chunk) {
        const int32_t nj = n_ctx - j0 < k_chunk ? n_ctx - j0 : k_chunk;
        for (int32_t c = 0; c < nj; ++c) {
            const int32_t j = j0 + c;
            rows[c] = size_t(block_table[j / block_size]) * block_stride + size_t(j % block_size) * slot_stride;
            if constexpr (NV > 0) {
                __m512 k[NV > 0 ? NV : 1];   // (NV, 16) the key row
                for (int b = 0; b < NV; ++b) k[b] = load16_f16(k_base + rows[c] + 16 * b);
                for (int64_t g = 0; g < n_heads; ++g) {
                    const float * qg = q16 + g * hd;
                    __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
                    for (int b = 0; b < NV; b += 4) {
                        a0 = _mm512_fmadd_ps(k[b], _mm512_loadu_ps(qg + 16 * b), a0);
                        a1 = _mm512_fmadd_ps(k[b + 1], _mm512_loadu_ps(qg + 16 * b + 16), a1);
                        a2 = _mm512_fmadd_ps(k[b + 2], _mm512_loadu_ps(qg + 16 * b + 32), a2);
                        a3 = _mm512_fmadd_ps(k[b + 3], _mm512_loadu_ps(qg + 16 * b + 48), a3);
                    }
                    sc[g * k_chunk + c] =
                        _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a2), _mm512_add_ps(a1, a3))) * scale;
                }
            } else {
                convert_row(k_base + rows[c], row, hd);
                for (int64_t g = 0; g < n_heads; ++g) sc[g * k_chunk + c] = dot_q_kf(q16 + g * hd, row, hd) * scale;
            }
        }
        for (int32_t c = 0; c < nj; ++c) {
            const bool first = j0 + c == 0;
            if constexpr (NV > 0) {
                __m512 v[NV > 0 ? NV : 1];   // (NV, 16) the value row
                for (int b = 0; b < NV; ++b) v[b] = load16_f16(v_base + rows[c] + 16 * b);
                for (int64_t g = 0; g < n_heads; ++g) {
                    float * accg = acc + g * hd;
                    float ms;
                    const float vs = softmax_step(sc[g * k_chunk + c], first, m[g], sum[g], accg, hd, ms);
                    const __m512 vs16 = _mm512_set1_ps(vs);
                    for (int b = 0; b < NV; ++b)
                        _mm512_storeu_ps(accg + 16 * b, round_f16(_mm512_fmadd_ps(v[b], vs16, _mm512_loadu_ps(accg + 16 * b))));
                    sum[g] = fma1(sum[g], ms, vs);
                }
            } else {
                convert_row(v_base + rows[c], row, hd);
                for (int64_t g = 0; g < n_heads; ++g) {
                    float * accg = acc + g * hd;
                    float ms;
                    const float vs = softmax_step(sc[g * k_chunk + c], first, m[g], sum[g], accg, hd, ms);
                    mad_acc_f(accg, row, vs, hd);
                    sum[g] = fma1(sum[g], ms, vs);
                }
            }
        }
    }
    for (int64_t g = 0; g < n_heads; ++g) {
        // Multiplied by 1/S, as ggml scales its accumulator (ggml_vec_scale_f32 by S_inv).
        const float inv = 1.0f / sum[g];
        const __m256 vinv = _mm256_set1_ps(inv);
        const float * accg = acc + g * hd;
        float * og = out + g * hd;
        int64_t i = 0;
        for (; i + 8 <= hd; i += 8) _mm256_storeu_ps(og + i, _mm256_mul_ps(_mm256_loadu_ps(accg + i), vinv));
        for (; i < hd; ++i) og[i] = accg[i] * inv;
    }
}

} // namespace

// NOTE(attention): grouped-query heads share one KV head, so each key and value row is converted from F16
// once (exactly, to F32) and used by every head; per head the arithmetic is attend_f16's, step for step
// (same F16 query, dot lanes and reduction, expf calls, F16 rounding after each update, S = fma(S, ms,
// vs), out = acc · (1/S)), so each head's output is bitwise attend_f16's whatever the group size. Walking
// the heads inside the key loop also gives the out-of-order core n_heads independent softmax chains where
// attend_f16 has one. Head dims 64 and 128 (most models) keep the row in registers, loops unrolled.
void attend_f16_heads(const float * q, int64_t n_heads, int64_t head_dim, float scale, int32_t n_ctx,
                      const int32_t * block_table, int32_t block_size, const uint16_t * k_base, const uint16_t * v_base,
                      size_t block_stride, size_t slot_stride, float * out, float * scratch) {
    // pre: n_heads >= 1, head_dim >= 1, n_ctx >= 1, block_size >= 1 (the reference checks and throws)
    if (n_heads < 1 || head_dim < 1 || n_ctx < 1 || block_size < 1) {
        ref::attend_f16_heads(q, n_heads, head_dim, scale, n_ctx, block_table, block_size, k_base, v_base,
                              block_stride, slot_stride, out, scratch);
        return;
    }
    auto kernel = head_dim == 64 ? attend_heads<4> : head_dim == 128 ? attend_heads<8> : attend_heads<0>;
    kernel(q, n_heads, head_dim, scale, n_ctx, block_table, block_size, k_base, v_base, block_stride, slot_stride,
           out, scratch);
}

} // namespace tmill::kernels::avx512
