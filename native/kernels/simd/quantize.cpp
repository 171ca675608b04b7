// Activation quantizers (kernel_table::quantize_q8_0, quantize_q8_1, quantize_q8_k) and the F16 rows of the KV
// cache and of F16 matmuls' activations (quantize_f16), once per ISA.
//
// NOTE(quantize): each is bitwise its quant:: reference (quantize_row_q8_0, _q8_1, _q8_k), which runs once
// per activation row of every matmul (its scalar nearbyint is a library call per element at the baseline
// ISA); parity with llama.cpp depends on the activation bytes being exactly ggml's. The same IEEE operations
// in the same order per element:
// - Q8_0/Q8_1: amax of |x| (max is exact, so the lane order is free), d = amax / 127, id = 127 / amax (0 for
//   amax == 0), d to F16 by F16C round-to-nearest-even (the library's conversion rounds the same way,
//   subnormals included), q = cvtps (MXCSR round-to-nearest-even, as nearbyint in the default mode) of
//   x * id; |q| <= 127, so narrowing to bytes never clips. Q8_1 adds s = F16(d * float(sum q)), the integer
//   sum exact in any order.
// - Q8_K: max = the first element (lowest index) of largest magnitude, found as the lowest lane equal to the
//   exact amax; iscale = -127 / max; q = min(round-to-nearest-even(iscale * x), 127) — the reference rounds
//   by the 1.5·2^23 shift, which is round-to-nearest-even for |v| < 2^22, as cvtps is, and clamping the float
//   at 127 before rounding gives the same byte as clamping the integer after; bsums exact integer sums;
//   d = 1 / iscale. An all-zero block (amax == 0) is all zero bytes.
#include "kernels/simd/isa.h"
#include "quant/fp16.h"
#include "quant/q8-0.h"
#include "quant/q8-1.h"
#include "quant/q8-k.h"

#include <cstring>

namespace tmill::kernels::TM_KERNELS_LEVEL {
// In the level's namespace so every function of this object carries the level's name (isa-isolation test).
namespace {

// The four sums of 8 consecutive signed bytes of q[0..31] (psadbw on the bytes biased to unsigned).
__m256i sum8x4(const int8_t * q) {
    const __m256i u = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(q)), _mm256_set1_epi8(-128));
    return _mm256_sub_epi64(_mm256_sad_epu8(u, _mm256_setzero_si256()), _mm256_set1_epi64x(8 * 128));
}

// Quantizes one 32-block as Q8_0 does; returns d (F32, before rounding to F16).
float quantize_block32(const float * xb, int8_t * qs) {
    constexpr int n_vec = 32 / isa::width;   // vectors per block
    isa::f32 v[n_vec];
    for (int k = 0; k < n_vec; ++k) v[k] = isa::load(xb + k * isa::width);
    isa::f32 m = isa::abs(v[0]);
    for (int k = 1; k < n_vec; ++k) m = isa::max(m, isa::abs(v[k]));
    const float amax = isa::reduce_max(m);
    const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
    const isa::f32 vid = isa::set1(id);
    for (int k = 0; k < n_vec; ++k) v[k] = isa::mul(v[k], vid);
    isa::store_q8(qs, v);
    return amax / 127.0f;
}

// W consecutive blocks of 32 at x quantized as quantize_block32 quantizes one — per block the same operations
// (amax of |x|, id = 127 / amax or 0 for amax == 0, q = round(x * id), d = amax / 127) — with the W maxima found
// together (isa::max_lanes: max is exact in any order) and the W divisions as one vector's: the scalar
// reduction and divisions of each block were a serial chain most of the quantizer's time. Block i's bytes to
// q + i * stride; lane i of the result is its d (F32, before the rounding to F16).
isa::f32 quantize_blocks32(const float * x, int8_t * q, size_t stride) {
    constexpr int W = isa::width, n_vec = 32 / W;
    isa::f32 m[W];
    for (int i = 0; i < W; ++i) {
        m[i] = isa::abs(isa::load(x + 32 * i));
        for (int k = 1; k < n_vec; ++k) m[i] = isa::max(m[i], isa::abs(isa::load(x + 32 * i + k * W)));
    }
    const isa::f32 amax = isa::max_lanes(m);
    alignas(64) float id[W];
    isa::store(id, isa::select_less(isa::zero(), amax, isa::div(isa::set1(127.0f), amax), isa::zero()));
    for (int i = 0; i < W; ++i) {
        const isa::f32 vid = isa::set1(id[i]);
        isa::f32 v[n_vec];
        for (int k = 0; k < n_vec; ++k) v[k] = isa::mul(isa::load(x + 32 * i + k * W), vid);
        isa::store_q8(q + size_t(i) * stride, v);
    }
    return isa::div(amax, isa::set1(127.0f));
}

// Every block of a row of nb: W at a time (quantize_blocks32), the rest one by one; finish(i, d) stores block
// i's scale (and what else its format derives from d and its bytes).
template <typename Block, typename Finish>
void quantize_row32(const float * x, Block * out, int64_t nb, const Finish & finish) {
    constexpr int W = isa::width;
    int64_t i = 0;
    for (; i + W <= nb; i += W) {
        alignas(64) float d[W];
        isa::store(d, quantize_blocks32(x + i * 32, out[i].qs, sizeof(Block)));
        for (int j = 0; j < W; ++j) finish(i + j, d[j]);
    }
    for (; i < nb; ++i) finish(i, quantize_block32(x + i * 32, out[i].qs));
}

} // namespace

void quantize_q8_0(const float * x, void * y, int64_t n) {
    // pre: n % 32 == 0 (the matmul that calls this checked n_in against the block size)
    quant::block_q8_0 * out = static_cast<quant::block_q8_0 *>(y);
    quantize_row32(x, out, n / quant::qk8_0, [&](int64_t i, float d) { out[i].d = uint16_t(_cvtss_sh(d, _MM_FROUND_TO_NEAREST_INT)); });
}

// NOTE(quantize-f16): F16C's conversion (immediate round-to-nearest-even) gives quant::fp32_to_fp16's bits for
// every value but NaN — subnormal results, ties and the overflow to infinity from 65520 on included; a NaN keeps
// payload bits there, where the reference writes the canonical quiet NaN, so a vector holding one (and the tail)
// goes through the reference element by element. The KV cache's rows took the scalar reference on the calling
// thread before: 3.3 % of SmolLM2-135M's prefill on the Xeon.
void quantize_f16(const float * x, void * y, int64_t n) {
    uint16_t * out = static_cast<uint16_t *>(y);
    int64_t i = 0;
    for (; i + isa::width <= n; i += isa::width) {
        const isa::f32 v = isa::load(x + i);
        if (!isa::has_nan(v)) {
            isa::store_f16(out + i, v);
            continue;
        }
        for (int j = 0; j < isa::width; ++j) out[i + j] = quant::fp32_to_fp16(x[i + j]);
    }
    for (; i < n; ++i) out[i] = quant::fp32_to_fp16(x[i]);
}

void quantize_q8_1(const float * x, void * y, int64_t n) {
    // pre: n % 32 == 0
    quant::block_q8_1 * out = static_cast<quant::block_q8_1 *>(y);
    quantize_row32(x, out, n / quant::qk8_1, [&](int64_t i, float d) {
        const __m256i s4 = sum8x4(out[i].qs);
        const __m128i s2 = _mm_add_epi64(_mm256_castsi256_si128(s4), _mm256_extracti128_si256(s4, 1));
        const int sum = int(_mm_cvtsi128_si64(s2) + _mm_extract_epi64(s2, 1));
        out[i].d = uint16_t(_cvtss_sh(d, _MM_FROUND_TO_NEAREST_INT));
        out[i].s = uint16_t(_cvtss_sh(d * float(sum), _MM_FROUND_TO_NEAREST_INT));
    });
}

void quantize_q8_k(const float * x, void * y, int64_t n) {
    // pre: n % 256 == 0
    constexpr int n_vec = quant::qk_k / isa::width;
    quant::block_q8_k * out = static_cast<quant::block_q8_k *>(y);
    for (int64_t i = 0; i < n / quant::qk_k; ++i) {
        const float * xb = x + i * quant::qk_k;
        quant::block_q8_k & b = out[i];
        isa::f32 m = isa::abs(isa::load(xb));
        for (int k = 1; k < n_vec; ++k) m = isa::max(m, isa::abs(isa::load(xb + k * isa::width)));
        const float amax = isa::reduce_max(m);
        if (amax == 0.0f) {
            std::memset(&b, 0, sizeof b);
            continue;
        }
        float max = 0.0f;
        for (int k = 0; k < n_vec; ++k) {
            const int lane = isa::first_equal(isa::abs(isa::load(xb + k * isa::width)), amax);
            if (lane >= 0) {
                max = xb[k * isa::width + lane];
                break;
            }
        }
        const float iscale = -127.0f / max;
        const isa::f32 vs = isa::set1(iscale), top = isa::set1(127.0f);
        for (int k = 0; k < quant::qk_k; k += 32) {
            isa::f32 v[32 / isa::width];
            for (int j = 0; j < 32 / isa::width; ++j) v[j] = isa::min(isa::mul(isa::load(xb + k + j * isa::width), vs), top);
            isa::store_q8(b.qs + k, v);
            // Bytes 16g .. 16g+15 are two of the four 8-byte sums.
            alignas(32) int64_t s[4];
            _mm256_store_si256(reinterpret_cast<__m256i *>(s), sum8x4(b.qs + k));
            b.bsums[k / 16] = int16_t(s[0] + s[1]);
            b.bsums[k / 16 + 1] = int16_t(s[2] + s[3]);
        }
        b.d = 1.0f / iscale;
    }
}

} // namespace tmill::kernels::TM_KERNELS_LEVEL
