// Scalar reference of paged causal attention over an F16 KV cache (kernel_table::attend_f16).
#include "kernels/ref/ref.h"

#include <algorithm>
#include <cmath>

#include "base/error.h"
#include "quant/fp16.h"

namespace tmill::kernels::ref {

namespace {

float round_f16(float x) { return quant::fp16_to_fp32(quant::fp32_to_fp16(x)); }

// A key's score from its dot product; mul is scale, or scale / softcap when soft-capping (ggml divides the
// scale once, then caps each score with tanhf).
float score(float dot, float mul, float softcap) {
    const float s = dot * mul;
    return softcap != 0.0f ? softcap * std::tanh(s) : s;
}

} // namespace

// NOTE(attention): follows llama.cpp's CPU flash attention (ggml_compute_forward_flash_attn_ext_f16) so our
// logits agree with node-llama-cpp's to ~1e-3: the query is rounded to F16 before its dot products with the
// F16 keys; the softmax is online (running max m, running sum S; a new max rescales the accumulator by
// exp(m_old - m)); the value accumulator is an F16 vector, rounded after every rescale and every update.
// This scalar version sums each dot product left to right in F32 and rounds acc + v*vs (product, then sum)
// to F16; the SIMD variants use FMA and ggml's lane order, so they may differ from it by F16 ulps of acc.
void attend_f16(const float * q, int64_t head_dim, float scale, float softcap, int32_t n_ctx, const int32_t * block_table,
                int32_t block_size, const uint16_t * k_base, const uint16_t * v_base, size_t block_stride,
                size_t slot_stride, float * out, float * scratch) {
    // pre: head_dim >= 1, n_ctx >= 1, block_size >= 1 (checked once per call, outside the key loop)
    TM_CHECK(head_dim >= 1 && n_ctx >= 1 && block_size >= 1, invalid_argument,
             "attend_f16: head_dim, n_ctx and block_size must be positive");
    float * acc = scratch;              // (head_dim) value accumulator, F16-representable values
    float * q16 = scratch + head_dim;   // (head_dim) query rounded to F16
    for (int64_t i = 0; i < head_dim; ++i) q16[i] = round_f16(q[i]);
    const float mul = softcap != 0.0f ? scale / softcap : scale;

    float m = -INFINITY, sum = 0.0f;
    std::fill(acc, acc + head_dim, 0.0f);
    for (int32_t j = 0; j < n_ctx; ++j) {
        const size_t row = size_t(block_table[j / block_size]) * block_stride + size_t(j % block_size) * slot_stride;
        const uint16_t * k = k_base + row;   // (head_dim) F16
        const uint16_t * v = v_base + row;   // (head_dim) F16
        float dot = 0.0f;
        for (int64_t i = 0; i < head_dim; ++i) dot += q16[i] * quant::fp16_to_fp32(k[i]);
        const float sc = score(dot, mul, softcap);
        float ms = 1.0f, vs;
        if (sc > m) {
            const float m_old = m;
            m = sc;
            ms = j == 0 ? 0.0f : std::exp(m_old - m);
            for (int64_t i = 0; i < head_dim; ++i) acc[i] = round_f16(acc[i] * ms);
            vs = 1.0f;
        } else {
            vs = std::exp(sc - m);
        }
        for (int64_t i = 0; i < head_dim; ++i) acc[i] = round_f16(acc[i] + quant::fp16_to_fp32(v[i]) * vs);
        sum = sum * ms + vs;
    }
    const float inv = 1.0f / sum;   // ggml scales by 1/S rather than dividing
    for (int64_t i = 0; i < head_dim; ++i) out[i] = acc[i] * inv;
}

// The heads one after another: attend_f16_heads is defined as attend_f16 per head.
void attend_f16_heads(const float * q, int64_t n_heads, int64_t head_dim, float scale, float softcap, int32_t n_ctx,
                      const int32_t * block_table, int32_t block_size, const uint16_t * k_base, const uint16_t * v_base,
                      size_t block_stride, size_t slot_stride, float * out, float * scratch) {
    // pre: n_heads >= 1 (attend_f16 checks the rest)
    TM_CHECK(n_heads >= 1, invalid_argument, "attend_f16_heads: n_heads must be positive");
    for (int64_t g = 0; g < n_heads; ++g)
        attend_f16(q + g * head_dim, head_dim, scale, softcap, n_ctx, block_table, block_size, k_base, v_base, block_stride,
                   slot_stride, out + g * head_dim, scratch);
}

} // namespace tmill::kernels::ref
