// Paged causal attention over an F16 KV cache (kernel_table::attend_f16, attend_f16_heads), once per ISA.
#include "kernels/simd/isa.h"
#include "kernels/simd/expf-glibc.h"
#include "kernels/simd/ggml-dot.h"
#include "kernels/simd/loads.h"
#include "kernels/ref/ref.h"

#include <cstdint>
#include <type_traits>

// No <cmath> here (its inline functions could be emitted with this file's ISA flags and picked by the
// linker for baseline callers); glibc's expf and tanhf are what llama.cpp calls (std::tanh(float) is
// tanhf), so scores exponentiate and soft-cap identically.
extern "C" float expf(float) noexcept;
extern "C" float tanhf(float) noexcept;

namespace tmill::kernels::TM_KERNELS_LEVEL {

namespace {

constexpr int W = isa::width;
using vec = isa::f32;
constexpr int k_chunk = k_attend_key_chunk;   // keys whose scores are computed before the serial softmax walks them

float round_f16(float x) { return _cvtsh_ss(_cvtss_sh(x, _MM_FROUND_TO_NEAREST_INT)); }
float fma1(float a, float b, float c) { return _mm_cvtss_f32(_mm_fmadd_ss(_mm_set_ss(a), _mm_set_ss(b), _mm_set_ss(c))); }

// The softmax sum's update S = S * ms + vs with two roundings, as llama.cpp's FMA builds compute it (measured
// against node-llama-cpp's zen4 build: fusing it moves S, hence a whole head's output, by an ulp after a new
// maximum). Written with scalar intrinsics so no compiler contracts it into an FMA.
float sum_update(float sum, float ms, float vs) {
    return _mm_cvtss_f32(_mm_add_ss(_mm_mul_ss(_mm_set_ss(sum), _mm_set_ss(ms)), _mm_set_ss(vs)));
}

// dot(q16, k) as ggml_vec_dot_f16 computes it for this ISA's step (GGML_F16_STEP = 4W: 32 on AVX2, 64 on
// AVX-512): the lanes over the first n - n % 4W elements in ggml's order (ggml-dot.h; K is the key row as F16
// or already converted to F32 — exact, so the same value), their F32 sum widened to double (ggml's sumf is
// a ggml_float), then each leftover product rounded to F32 and added in double, the total rounded to F32
// once. With head_dim 32 on AVX-512 every product is a leftover, so this is a plain double sum of F32
// products there; on AVX2 the same head has none.
template <typename LK>
float dot_q_k(const float * q16, const void * k, int64_t n) {
    const int64_t np = n / (4 * W) * (4 * W);
    double sum = ggml_dot_lanes<isa, LK, load_f32<isa>>(k, q16, np);
    for (int64_t i = np; i < n; ++i) sum += double(_mm_cvtss_f32(_mm_mul_ss(_mm_set_ss(LK::one(k, i)), _mm_set_ss(q16[i]))));
    return float(sum);
}

// acc (n) = f16(acc * s)
// The reference's score (kernels/ref/attention.cpp): dot * mul, soft-capped when softcap != 0 (mul is then
// scale / softcap, as ggml folds it).
inline float score(float dot, float mul, float softcap) {
    const float s = dot * mul;
    return softcap != 0.0f ? softcap * tanhf(s) : s;
}

void scale_acc(float * acc, float s, int64_t n) {
    const vec vs = isa::set1(s);
    int64_t i = 0;
    for (; i + W <= n; i += W) isa::store(acc + i, isa::round_f16(isa::mul(isa::load(acc + i), vs)));
    for (; i < n; ++i) acc[i] = round_f16(acc[i] * s);
}

// acc (n) = f16(fma(v, s, acc)), v F16 (LV = load_f16) or already converted to F32 (load_f32)
template <typename LV>
void mad_acc(float * acc, const void * v, float s, int64_t n) {
    const vec vs = isa::set1(s);
    int64_t i = 0;
    for (; i + W <= n; i += W) isa::store(acc + i, isa::round_f16(isa::fmadd(LV::vec(v, i), vs, isa::load(acc + i))));
    for (; i < n; ++i) acc[i] = round_f16(fma1(LV::one(v, i), s, acc[i]));
}

// q16 (n) = f16(q); acc (n) = 0.
void start_head(const float * q, float * q16, float * acc, int64_t n) {
    int64_t i = 0;
    for (; i + W <= n; i += W) {
        isa::store(q16 + i, isa::round_f16(isa::load(q + i)));
        isa::store(acc + i, isa::zero());
    }
    for (; i < n; ++i) { q16[i] = round_f16(q[i]); acc[i] = 0.0f; }
}

// out (n) = acc · (1/S), as ggml scales its accumulator (ggml_vec_scale_f32 by S_inv).
void finish_head(const float * acc, float sum, float * out, int64_t n) {
    const float inv = 1.0f / sum;
    const vec vinv = isa::set1(inv);
    int64_t i = 0;
    for (; i + W <= n; i += W) isa::store(out + i, isa::mul(isa::load(acc + i), vinv));
    for (; i < n; ++i) out[i] = acc[i] * inv;
}

// dst (n) F32 = src (n) F16, exactly.
void convert_row(const uint16_t * src, float * dst, int64_t n) {
    int64_t i = 0;
    for (; i + W <= n; i += W) isa::store(dst + i, isa::load_f16(src + i));
    for (; i < n; ++i) dst[i] = _cvtsh_ss(src[i]);
}

// One step of the online softmax for one head: score s against running max m; returns vs and sets ms (the
// factor acc was scaled by; a new maximum rescales acc here).
float softmax_step(float s, bool first, float & m, float * acc, int64_t hd, float & ms) {
    ms = 1.0f;
    if (s > m) {
        const float m_old = m;
        m = s;
        ms = first ? 0.0f : expf(m_old - s);
        // The first key finds acc at zero; a factor of exactly 1 leaves F16 values unchanged.
        if (!first && ms != 1.0f) scale_acc(acc, ms, hd);
        return 1.0f;
    }
    return expf(s - m);
}

size_t row_offset(const int32_t * block_table, int32_t block_size, size_t block_stride, size_t slot_stride, int32_t j) {
    return size_t(block_table[j / block_size]) * block_stride + size_t(j % block_size) * slot_stride;
}

// The softmax factors of a chunk of nj keys for n_heads heads, as softmax_step gives them key by key: a key
// that raises its head's running maximum m takes vs = 1 and rescales the accumulator by ms = e^(m_old - s)
// (0 at the very first key: e^-inf); any other takes vs = e^(s - m) and ms = 1. sc (n_heads, k_chunk) holds
// the scores and receives the vs; ms (n_heads, k_chunk) receives the ms. Only the running maxima are a serial
// walk (s > m ? s : m, one maxss per key, so a NaN score never raises one, as in softmax_step), whose values
// ms holds meanwhile; then W keys at a time, the exponentials through expf_glibc — glibc's expf values bit
// for bit, with no call to spill registers. All heads walk before any is read back as vectors, so the scalar
// stores have left the store buffer by then. Lanes past nj compute from whatever sc holds and are not read.
void softmax_factors(float * sc, float * ms, int64_t n_heads, int32_t nj, float * m) {
    for (int64_t g = 0; g < n_heads; ++g) {
        const float * s = sc + g * k_chunk;
        float * before = ms + g * k_chunk;   // the running maximum each key meets
        float mg = m[g];
        for (int32_t c = 0; c < nj; ++c) {
            before[c] = mg;
            mg = s[c] > mg ? s[c] : mg;
        }
        for (int32_t c = nj; c < k_chunk; ++c) before[c] = 0.0f;
        m[g] = mg;
    }
    const vec one = isa::set1(1.0f);
    for (int64_t i = 0; i < n_heads * k_chunk; i += W) {
        const vec s = isa::load(sc + i), p = isa::load(ms + i);
        const vec e = expf_glibc<isa>(isa::select_less(p, s, isa::sub(p, s), isa::sub(s, p)));
        isa::store(ms + i, isa::select_less(p, s, e, one));
        isa::store(sc + i, isa::select_less(p, s, one, e));
    }
}

// The scores of a chunk's keys for every head (head_dim = W * NV, NV 4 or 8), the keys' rows already in kbuf as
// F32 (k_chunk rows of head_dim; rows past nj hold any finite values): per head, its F16 query in registers, each
// key's lanes in ggml_vec_dot_f16's order (dot_q_k's: four accumulators over steps of 4W, then (a0 + a2) +
// (a1 + a3)), then W keys' reductions at once by reduce_add_ggml's pairs (isa::reduce_add_ggml_lanes: the same
// sums), times mul, soft-capped where softcap != 0 — score()'s value for every key, lanes past nj unread.
template <int NV>
void chunk_scores(const float * q16, int64_t n_heads, const float * kbuf, int32_t nj, float mul, float softcap, float * sc) {
    constexpr int64_t hd = int64_t(W) * NV;
    for (int64_t g = 0; g < n_heads; ++g) {
        vec q[NV];
        for (int b = 0; b < NV; ++b) q[b] = isa::load(q16 + g * hd + W * b);
        float * sg = sc + g * k_chunk;
        for (int c0 = 0; c0 < k_chunk; c0 += W) {
            vec lanes[W];
            for (int c = 0; c < W; ++c) {
                const float * k = kbuf + (c0 + c) * hd;
                vec a0 = isa::zero(), a1 = a0, a2 = a0, a3 = a0;
                for (int b = 0; b < NV; b += 4) {
                    a0 = isa::fmadd(isa::load(k + W * b), q[b], a0);
                    a1 = isa::fmadd(isa::load(k + W * b + W), q[b + 1], a1);
                    a2 = isa::fmadd(isa::load(k + W * b + 2 * W), q[b + 2], a2);
                    a3 = isa::fmadd(isa::load(k + W * b + 3 * W), q[b + 3], a3);
                }
                lanes[c] = isa::add(isa::add(a0, a2), isa::add(a1, a3));
            }
            isa::store(sg + c0, isa::mul(isa::reduce_add_ggml_lanes(lanes), isa::set1(mul)));
        }
        if (softcap != 0.0f)
            for (int32_t c = 0; c < nj; ++c) sg[c] = softcap * tanhf(sg[c]);
    }
}

// The value updates of a chunk for HG heads whose accumulators (head_dim = W * NV each) stay in registers
// across its keys: per key, acc = f16(acc * ms) when ms != 1 (a factor of exactly 1 leaves F16 values
// unchanged; the first key scales the zero accumulator by 0), then acc = f16(fma(v, vs, acc)) and
// S = S * ms + vs — attend_f16's operations in its order.
template <int NV, int HG>
void update_values(float * acc, const float * vs, const float * ms, float * sum, int32_t nj, const uint16_t * v_base,
                   const size_t * rows) {
    constexpr int64_t hd = int64_t(W) * NV;
    vec a[HG][NV];   // (HG, NV, W) the accumulators
    for (int h = 0; h < HG; ++h)
        for (int b = 0; b < NV; ++b) a[h][b] = isa::load(acc + h * hd + W * b);
    for (int32_t c = 0; c < nj; ++c) {
        vec v[NV];   // (NV, W) the value row
        for (int b = 0; b < NV; ++b) v[b] = isa::load_f16(v_base + rows[c] + W * b);
        for (int h = 0; h < HG; ++h) {
            const float f = ms[h * k_chunk + c], w = vs[h * k_chunk + c];
            if (f != 1.0f) {
                const vec fv = isa::set1(f);
                for (int b = 0; b < NV; ++b) a[h][b] = isa::round_f16(isa::mul(a[h][b], fv));
            }
            const vec wv = isa::set1(w);
            for (int b = 0; b < NV; ++b) a[h][b] = isa::round_f16(isa::fmadd(v[b], wv, a[h][b]));
            sum[h] = sum_update(sum[h], f, w);
        }
    }
    for (int h = 0; h < HG; ++h)
        for (int b = 0; b < NV; ++b) isa::store(acc + h * hd + W * b, a[h][b]);
}

// The grouped kernel for head_dim = W * NV (NV 4 or 8: dot_q_k has no leftovers), or any head_dim when
// NV == 0. With NV > 0 a chunk's key rows are converted once into a buffer for its scores (chunk_scores), the
// loops are unrolled, and the accumulators of up to W registers' worth of heads stay in registers across a
// chunk's values; the operations and their order are dot_q_k's and attend_f16's.
template <int NV>
void attend_heads(const float * q, int64_t n_heads, int64_t head_dim, float scale, float softcap, int32_t n_ctx,
                  const int32_t * block_table, int32_t block_size, const uint16_t * k_base, const uint16_t * v_base,
                  size_t block_stride, size_t slot_stride, float * out, float * scratch) {
    static_assert(NV % 4 == 0, "head_dim must be a multiple of 4W (ggml's step)");
    const int64_t hd = NV > 0 ? int64_t(W * NV) : head_dim;
    // (k_chunk, head_dim) the chunk's key rows as F32, 64-byte aligned (the scratch has the slack)
    float * kbuf = reinterpret_cast<float *>((reinterpret_cast<uintptr_t>(scratch) + 63) & ~uintptr_t(63));
    float * acc = kbuf + k_chunk * hd;      // (n_heads, head_dim) value accumulators, F16-representable values
    float * q16 = acc + n_heads * hd;       // (n_heads, head_dim) queries rounded to F16
    float * sc = q16 + n_heads * hd;        // (n_heads, k_chunk) scores of the current chunk's keys, then their vs
    float * ms = sc + n_heads * k_chunk;    // (n_heads, k_chunk) the current chunk's rescale factors
    float * m = ms + n_heads * k_chunk;     // (n_heads) running maxima
    float * sum = m + n_heads;              // (n_heads) running sums S
    float * row = kbuf;                     // (head_dim) the key or value row being used, as F32 (NV == 0)
    const float mul = softcap != 0.0f ? scale / softcap : scale;
    for (int64_t g = 0; g < n_heads; ++g) {
        start_head(q + g * hd, q16 + g * hd, acc + g * hd, hd);
        m[g] = -__builtin_inff();
        sum[g] = 0.0f;
    }

    size_t rows[k_chunk];   // (k_chunk) element offsets of the current chunk's key/value rows
    for (int32_t j0 = 0; j0 < n_ctx; j0 += k_chunk) {
        const int32_t nj = n_ctx - j0 < k_chunk ? n_ctx - j0 : k_chunk;
        for (int32_t c = 0; c < nj; ++c) {
            rows[c] = row_offset(block_table, block_size, block_stride, slot_stride, j0 + c);
            if constexpr (NV > 0) {
                convert_row(k_base + rows[c], kbuf + c * hd, hd);
            } else {
                convert_row(k_base + rows[c], row, hd);
                for (int64_t g = 0; g < n_heads; ++g) sc[g * k_chunk + c] = score(dot_q_k<load_f32<isa>>(q16 + g * hd, row, hd), mul, softcap);
            }
        }
        if constexpr (NV > 0) {
            for (int32_t c = nj; c < k_chunk; ++c)   // a last, partial chunk: finite values in the unread lanes
                for (int64_t i = 0; i < hd; i += W) isa::store(kbuf + c * hd + i, isa::zero());
            chunk_scores<NV>(q16, n_heads, kbuf, nj, mul, softcap, sc);
        }
        softmax_factors(sc, ms, n_heads, nj, m);
        if constexpr (NV > 0) {
            constexpr int group = W / (NV > 0 ? NV : 1);   // heads whose accumulators fill W registers: half the register file
            int64_t g = 0;
            for (; g + group <= n_heads; g += group)
                update_values<NV, group>(acc + g * hd, sc + g * k_chunk, ms + g * k_chunk, sum + g, nj, v_base, rows);
            // The last heads together too (SmolLM2-135M's 3 heads a group went one at a time: each head's F16
            // rounding chain alone, each value row loaded again per head).
            const int64_t rest = n_heads - g;
            const auto update = [&](auto heads) {
                update_values<NV, decltype(heads)::value>(acc + g * hd, sc + g * k_chunk, ms + g * k_chunk, sum + g, nj, v_base, rows);
            };
            if constexpr (group > 3)
                if (rest == 3) update(std::integral_constant<int, 3>{});
            if constexpr (group > 2)
                if (rest == 2) update(std::integral_constant<int, 2>{});
            if (rest == 1) update(std::integral_constant<int, 1>{});
        } else {
            for (int32_t c = 0; c < nj; ++c) {
                convert_row(v_base + rows[c], row, hd);
                for (int64_t g = 0; g < n_heads; ++g) {
                    float * accg = acc + g * hd;
                    const float f = ms[g * k_chunk + c], w = sc[g * k_chunk + c];
                    if (f != 1.0f) scale_acc(accg, f, hd);
                    mad_acc<load_f32<isa>>(accg, row, w, hd);
                    sum[g] = sum_update(sum[g], f, w);
                }
            }
        }
    }
    for (int64_t g = 0; g < n_heads; ++g) finish_head(acc + g * hd, sum[g], out + g * hd, hd);
}

} // namespace

// NOTE(attention): the numerics of llama.cpp's CPU flash attention as its build for this ISA runs it (see
// the reference in kernels/ref/attention.cpp): F16 query, dot products in ggml_vec_dot_f16's lane order for
// the ISA's step, online softmax with S = S * ms + vs (two roundings), F16 value accumulator updated with FMA before
// rounding, out = acc · (1/S). Scores of up to 16 keys are computed before the softmax walks them (they do
// not depend on its state), which changes no result but lets the dot products overlap.
void attend_f16(const float * q, int64_t head_dim, float scale, float softcap, int32_t n_ctx, const int32_t * block_table,
                int32_t block_size, const uint16_t * k_base, const uint16_t * v_base, size_t block_stride,
                size_t slot_stride, float * out, float * scratch) {
    // pre: head_dim >= 1, n_ctx >= 1, block_size >= 1 (the reference checks and throws; no <stdexcept> here)
    if (head_dim < 1 || n_ctx < 1 || block_size < 1) {
        ref::attend_f16(q, head_dim, scale, softcap, n_ctx, block_table, block_size, k_base, v_base, block_stride,
                        slot_stride, out, scratch);
        return;
    }
    float * acc = scratch;              // (head_dim) value accumulator, F16-representable values
    float * q16 = scratch + head_dim;   // (head_dim) query rounded to F16
    start_head(q, q16, acc, head_dim);
    const float mul = softcap != 0.0f ? scale / softcap : scale;
    float m = -__builtin_inff(), sum = 0.0f;
    float sc[k_chunk];            // (k_chunk) scores of the keys in the current chunk
    size_t rows[k_chunk];         // (k_chunk) element offsets of those keys' rows
    for (int32_t j0 = 0; j0 < n_ctx; j0 += k_chunk) {
        const int32_t nj = n_ctx - j0 < k_chunk ? n_ctx - j0 : k_chunk;
        for (int32_t c = 0; c < nj; ++c) {
            rows[c] = row_offset(block_table, block_size, block_stride, slot_stride, j0 + c);
            sc[c] = score(dot_q_k<load_f16<isa>>(q16, k_base + rows[c], head_dim), mul, softcap);
        }
        for (int32_t c = 0; c < nj; ++c) {
            float ms;
            const float vs = softmax_step(sc[c], j0 + c == 0, m, acc, head_dim, ms);
            mad_acc<load_f16<isa>>(acc, v_base + rows[c], vs, head_dim);
            sum = sum_update(sum, ms, vs);
        }
    }
    finish_head(acc, sum, out, head_dim);
}

// NOTE(attention-heads): grouped-query heads share one KV head, so each key and value row is converted from
// F16 once (exactly, to F32) and used by every head; per head the arithmetic is attend_f16's, step for step
// (same F16 query, dot lanes and reduction, expf values, F16 rounding after each update, S = S * ms + vs,
// out = acc · (1/S)), so each head's output is bitwise attend_f16's whatever the group size. Per chunk of
// keys the scores come first (chunk_scores: heads outside, the chunk's keys inside, their reductions W at a
// time), then each head's softmax factors — the serial walk for the maxima, then the exponentials W at a time
// through expf_glibc, which returns glibc's expf values, so nothing changes against attend_f16's scalar calls
// — then the value updates. Head dims of 4W and 8W (64 and 128 on AVX-512, 32 and 64 on AVX2) keep a head's
// query while it scores the chunk, and during the value updates the accumulators of a few heads, in registers,
// loops unrolled: the calls to expf this kernel used to make per key and head spilled every vector register
// around them. Reducing each (head, key) dot on its own — a chain of extracts, adds and shuffles — was a third
// of the kernel's time on the Xeon; reduced together, the synthetic Q8_0 model's 512-token prompt went from
// ~355 to ~378 tok/s through Engine (2 threads).
void attend_f16_heads(const float * q, int64_t n_heads, int64_t head_dim, float scale, float softcap, int32_t n_ctx,
                      const int32_t * block_table, int32_t block_size, const uint16_t * k_base, const uint16_t * v_base,
                      size_t block_stride, size_t slot_stride, float * out, float * scratch) {
    // pre: n_heads >= 1, head_dim >= 1, n_ctx >= 1, block_size >= 1 (the reference checks and throws)
    if (n_heads < 1 || head_dim < 1 || n_ctx < 1 || block_size < 1) {
        ref::attend_f16_heads(q, n_heads, head_dim, scale, softcap, n_ctx, block_table, block_size, k_base, v_base,
                              block_stride, slot_stride, out, scratch);
        return;
    }
    auto kernel = head_dim == 4 * W ? attend_heads<4> : head_dim == 8 * W ? attend_heads<8> : attend_heads<0>;
    kernel(q, n_heads, head_dim, scale, softcap, n_ctx, block_table, block_size, k_base, v_base, block_stride, slot_stride,
           out, scratch);
}

} // namespace tmill::kernels::TM_KERNELS_LEVEL
