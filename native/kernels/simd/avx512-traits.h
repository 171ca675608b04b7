// The AVX-512 (F/BW/VL/DQ + VNNI) vector traits the family sources in kernels/simd/ are written against:
// 16 float lanes, loads and stores of a full vector or of its first n lanes (masks), the reductions in the
// orders our AVX-512 numerics follow, and this ISA's own sequences (llama.cpp's AVX-512 expf, the Q8 lane
// sums by VNNI). The same header builds the SIMDe-emulated level of the C++ tests (simd/isa.h).
// Internal linkage (anonymous namespace), as tiling.h: each ISA's copy stays in its own objects.
#pragma once

#include "kernels/hsum.h"

#include <cstdint>

// GCC 12's avx512fintrin.h builds _mm512_reduce_*/_mm512_insert* on self-initialised "undefined"
// vectors, which -Wuninitialized reports as uninitialised; the lanes are never read.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

// Functions that issue AVX512-BF16 instructions (NOTE(bf16-dot)): compiled for that extension on top of the library's
// AVX-512 flags, so only they may use it, and run only where kernels_for found it. The emulated level has no such
// instruction to allow (its stand-in is plain C++).
#if defined(TM_KERNELS_AVX512_EMULATED)
#define TM_AVX512_BF16_TARGET
#else
#define TM_AVX512_BF16_TARGET __attribute__((target("avx512bf16")))
#endif

namespace tmill::kernels {
namespace {

// The permute indices of avx512_traits::reduce_add_ggml_lanes' four steps (16 + i: lane i of the second vector),
// each step's two index vectors picking the lanes it adds. w: lanes 0-7 the halves' pairs (j, j + 8) of the
// first vector, lanes 8-15 the second's. x: quarter q the pairs (j, j + 4) of the halves of vector q (of 4). y:
// per quarter (j, j + 2) of two vectors' 4 lanes. z: (j, j + 1), with the lanes put back in vector order.
struct reduce_lanes_indices {
    alignas(64) int32_t w[2][16], x[2][16], y[2][16], z[2][16];
};
constexpr reduce_lanes_indices reduce_lanes_indices_for() {
    reduce_lanes_indices r{};
    for (int l = 0; l < 16; ++l) {
        const int q = l / 4, j = l % 4;
        r.w[0][l] = l < 8 ? l : 16 + (l - 8);
        r.w[1][l] = l < 8 ? 8 + l : 16 + l;
        r.x[0][l] = (q / 2) * 16 + (q % 2) * 8 + j;
        r.x[1][l] = r.x[0][l] + 4;
        r.y[0][l] = (j / 2) * 16 + 4 * q + j % 2;
        r.y[1][l] = r.y[0][l] + 2;
        // Before the reordering, lane 4q + j of the last sum holds vector 4j + q's total: lane k takes lane
        // 4 (k % 4) + k / 4.
        const int src = 4 * (l % 4) + l / 4, sq = src / 4, sj = src % 4;
        r.z[0][l] = (sj / 2) * 16 + 4 * sq + 2 * (sj % 2);
        r.z[1][l] = r.z[0][l] + 1;
    }
    return r;
}

struct avx512_traits {
    static constexpr const char * name = "avx512";
    static constexpr int width = 16;
    using f32 = __m512;
    using mask = __mmask16;

    static f32 zero() { return _mm512_setzero_ps(); }
    static f32 set1(float v) { return _mm512_set1_ps(v); }
    static f32 load(const float * p) { return _mm512_loadu_ps(p); }
    static void store(float * p, f32 v) { _mm512_storeu_ps(p, v); }
    static f32 add(f32 a, f32 b) { return _mm512_add_ps(a, b); }
    static f32 sub(f32 a, f32 b) { return _mm512_sub_ps(a, b); }
    static f32 mul(f32 a, f32 b) { return _mm512_mul_ps(a, b); }
    static f32 div(f32 a, f32 b) { return _mm512_div_ps(a, b); }
    static f32 max(f32 a, f32 b) { return _mm512_max_ps(a, b); }
    static f32 min(f32 a, f32 b) { return _mm512_min_ps(a, b); }
    static f32 abs(f32 a) { return _mm512_abs_ps(a); }
    static f32 fmadd(f32 a, f32 b, f32 c) { return _mm512_fmadd_ps(a, b, c); }
    static f32 load_f16(const uint16_t * p) { return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(p))); }
    static f32 load_bf16(const uint16_t * p) {
        const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(p));
        return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
    }
    // VDPBF16PS: lane j of acc plus the products of a's and b's BF16 pairs 2j + 1 and 2j, in that order, each add rounded
    // (NOTE(bf16-dot-step)). AVX512-BF16 only: call it from TM_AVX512_BF16_TARGET functions.
    TM_AVX512_BF16_TARGET static f32 dot_bf16_pairs(f32 acc, __m512i a, __m512i b) {
#if defined(TM_KERNELS_AVX512_EMULATED)
        return emulated::dpbf16_ps(acc, a, b);
#else
        return _mm512_dpbf16_ps(acc, (__m512bh)a, (__m512bh)b);
#endif
    }
    static f32 round_f16(f32 x) { return _mm512_cvtph_ps(_mm512_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT)); }
    static void store_f16(uint16_t * p, f32 x) {
        _mm256_storeu_si256(reinterpret_cast<__m256i *>(p), _mm512_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT));
    }
    static bool has_nan(f32 x) { return _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q) != 0; }

    // The first n lanes (0 <= n; all 16 from n = 16 on); inactive lanes load as zero and are not stored.
    static mask first(int64_t n) { return n >= 16 ? mask(0xffff) : mask((1u << n) - 1u); }
    static f32 load(const float * p, mask m) { return _mm512_maskz_loadu_ps(m, p); }
    static void store(float * p, f32 v, mask m) { _mm512_mask_storeu_ps(p, m, v); }
    static f32 load_f16(const uint16_t * p, mask m) { return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, p)); }
    static f32 load_bf16(const uint16_t * p, mask m) {
        return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, p)), 16));
    }

    // Sum of the lanes in _mm512_reduce_add_ps's order (halves down to 8 lanes, then pairs).
    static float reduce_add(f32 v) { return _mm512_reduce_add_ps(v); }
    // GGML_F32_VEC_REDUCE's last step on AVX-512: _mm512_reduce_add_ps.
    static float reduce_add_ggml(f32 v) { return _mm512_reduce_add_ps(v); }
    // Lane i: reduce_add_ggml(v[i]) for 16 vectors, by the same pairs: the halves (lane j + lane j + 8), then the
    // quarters of those (j + j + 4), then (j + j + 2) and (j + j + 1) — two vectors' steps per operation (a pair
    // of two-source permutes and an add, reduce_lanes_indices), 45 operations for the 16 sums where the 16
    // reductions take about 130.
    static f32 reduce_add_ggml_lanes(const f32 * v) {
        static constexpr reduce_lanes_indices ix = reduce_lanes_indices_for();
        f32 w[8], x[4], y[2];
        for (int i = 0; i < 8; ++i) w[i] = reduce_step(v[2 * i], v[2 * i + 1], ix.w[0], ix.w[1]);
        for (int i = 0; i < 4; ++i) x[i] = reduce_step(w[2 * i], w[2 * i + 1], ix.x[0], ix.x[1]);
        for (int i = 0; i < 2; ++i) y[i] = reduce_step(x[2 * i], x[2 * i + 1], ix.y[0], ix.y[1]);
        return reduce_step(y[0], y[1], ix.z[0], ix.z[1]);
    }
    // Lane i: the largest lane of v[i] for 16 vectors (max is exact in any order: reduce_add_ggml_lanes' steps).
    static f32 max_lanes(const f32 * v) {
        static constexpr reduce_lanes_indices ix = reduce_lanes_indices_for();
        f32 w[8], x[4], y[2];
        for (int i = 0; i < 8; ++i) w[i] = reduce_step<true>(v[2 * i], v[2 * i + 1], ix.w[0], ix.w[1]);
        for (int i = 0; i < 4; ++i) x[i] = reduce_step<true>(w[2 * i], w[2 * i + 1], ix.x[0], ix.x[1]);
        for (int i = 0; i < 2; ++i) y[i] = reduce_step<true>(x[2 * i], x[2 * i + 1], ix.y[0], ix.y[1]);
        return reduce_step<true>(y[0], y[1], ix.z[0], ix.z[1]);
    }
    // One step of reduce_add_ggml_lanes (Max: of max_lanes): the lanes of a and b that first picks plus (or the
    // larger of them and) those second picks.
    template <bool Max = false>
    static f32 reduce_step(f32 a, f32 b, const int32_t * first, const int32_t * second) {
        const f32 p = _mm512_permutex2var_ps(a, _mm512_load_si512(first), b), q = _mm512_permutex2var_ps(a, _mm512_load_si512(second), b);
        return Max ? _mm512_max_ps(p, q) : _mm512_add_ps(p, q);
    }
    // The lowest lane equal to s, or -1.
    static int first_equal(f32 v, float s) {
        const unsigned m = _mm512_cmp_ps_mask(v, _mm512_set1_ps(s), _CMP_EQ_OQ);
        return m ? __builtin_ctz(m) : -1;
    }
    static float reduce_max(f32 v) {
        const __m256 m8 = _mm256_max_ps(_mm512_castps512_ps256(v), _mm512_extractf32x8_ps(v, 1));
        __m128 h = _mm_max_ps(_mm256_castps256_ps128(m8), _mm256_extractf128_ps(m8, 1));
        h = _mm_max_ps(h, _mm_movehl_ps(h, h));
        h = _mm_max_ss(h, _mm_movehdup_ps(h));
        return _mm_cvtss_f32(h);
    }

    // The float matmul's n_in % 16 tail: one more masked step in the lanes (zero lanes add exact zeros).
    static constexpr bool tail_in_lanes = true;

    // Tile shapes (kernels/tiling.h rows per tile): as many rows as the registers hold for several tokens. One
    // token (decode) takes sets of rows spread over the range instead (NOTE(one-token-sets)).
    // q8_sets_one, q8_rows_many and q4_rows_many are the generic int8 block walk's, which this level does not take:
    // its Q8_0, Q4_0, Q5_0, IQ4_NL, Q4_1 and Q5_1 matmuls are the block-step kernels (avx512-block-step.h,
    // avx512-block-step-min.h).
    // F16 weights take 6 rows x 4 tokens (24 accumulators, 4 converted activation vectors and one weight vector of
    // the 32 registers): 10 conversions per 24 FMAs where 4 x 4 tiles issue 8 per 16, and a loop of 16 FMAs with 8
    // conversions beside them ran 10 % slower than the FMAs alone on the AMD EPYC (Zen 4). A 512-token prefill of the
    // synthetic TinyLlama-shape F16 model (2 threads, 7 rounds of 2 alternating with the 4-row build) went ~78 ->
    // ~83 tok/s (medians); 5 rows measured between the two. The VDPBF16PS tiles stay at 4 rows (6: 62 against 66 G
    // multiply-adds a second, NOTE(bf16-dot)).
    static constexpr int float_rows_many = 4, f16_rows_many = 6;
    static constexpr int q8_sets_one = 4, q8_rows_many = 5, q4_rows_many = 4;

    // Rope: (x1, x0) in each pair, and lane 2i = a - b, lane 2i+1 = a + b.
    static f32 swap_pairs(f32 a) { return _mm512_shuffle_ps(a, a, 0xB1); }
    static f32 sub_even_add_odd(f32 a, f32 b) { return _mm512_mask_sub_ps(_mm512_add_ps(a, b), 0x5555, a, b); }
    static f32 even_odd(f32 even, f32 odd) { return _mm512_mask_blend_ps(0xAAAA, even, odd); }   // even lanes of one, odd of the other

    // 32 floats (2 vectors) to bytes by cvtps (MXCSR round to nearest even); |values| <= 127.
    static void store_q8(int8_t * out, const f32 * v) {
        _mm_storeu_si128(reinterpret_cast<__m128i *>(out), _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(v[0])));
        _mm_storeu_si128(reinterpret_cast<__m128i *>(out + 16), _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(v[1])));
    }

    // Doubles, half the float lanes each, and lane selects (glibc's expf, simd/expf-glibc.h).
    using f64 = __m512d;
    static f64 widen_lo(f32 v) { return _mm512_cvtps_pd(_mm512_castps512_ps256(v)); }
    static f64 widen_hi(f32 v) { return _mm512_cvtps_pd(_mm512_extractf32x8_ps(v, 1)); }
    static f32 narrow_f64(f64 lo, f64 hi) { return _mm512_insertf32x8(_mm512_castps256_ps512(_mm512_cvtpd_ps(lo)), _mm512_cvtpd_ps(hi), 1); }
    static f64 set1_f64(double v) { return _mm512_set1_pd(v); }
    static f64 sub_f64(f64 a, f64 b) { return _mm512_sub_pd(a, b); }
    static f64 mul_f64(f64 a, f64 b) { return _mm512_mul_pd(a, b); }
    static f64 fmadd_f64(f64 a, f64 b, f64 c) { return _mm512_fmadd_pd(a, b, c); }
    static f64 fmsub_f64(f64 a, f64 b, f64 c) { return _mm512_fmsub_pd(a, b, c); }
    // Per lane, with b its IEEE bits: table[b % 32] + (b << 47), as a double (two-source permutes over the
    // 32-entry table, then bit 4 of the index picks the half).
    static f64 exp2_32nds(const uint64_t * table, f64 shifted) {
        const __m512i b = _mm512_castpd_si512(shifted);
        const __m512i low = _mm512_permutex2var_epi64(_mm512_loadu_si512(table), b, _mm512_loadu_si512(table + 8));
        const __m512i high = _mm512_permutex2var_epi64(_mm512_loadu_si512(table + 16), b, _mm512_loadu_si512(table + 24));
        const __m512i entry = _mm512_mask_blend_epi64(_mm512_test_epi64_mask(b, _mm512_set1_epi64(16)), low, high);
        return _mm512_castsi512_pd(_mm512_add_epi64(entry, _mm512_slli_epi64(b, 47)));
    }
    static f32 select_less(f32 a, f32 b, f32 then, f32 otherwise) { return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, b, _CMP_LT_OQ), otherwise, then); }
    static f32 select_nan(f32 x, f32 then, f32 otherwise) { return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), otherwise, then); }

    // e^x with the range reduction and degree-5 polynomial of llama.cpp's AVX-512 vectorised expf (ARM
    // optimized-routines constants): n = round(x / ln2) through the 1.5·2^23 shift, b = x - n·ln2 in two
    // parts, 2^n applied with scalef; |n| > 192 saturates to 0 or inf.
    static f32 exp_llama(f32 x) {
        const __m512 shift = _mm512_set1_ps(0x1.8p23f);
        const __m512 z = _mm512_fmadd_ps(x, _mm512_set1_ps(0x1.715476p+0f), shift);
        const __m512 n = _mm512_sub_ps(z, shift);
        const __m512 b = _mm512_fnmadd_ps(n, _mm512_set1_ps(0x1.7f7d1cp-20f), _mm512_fnmadd_ps(n, _mm512_set1_ps(0x1.62e4p-1f), x));
        const __m512 u = _mm512_mul_ps(b, b);
        const __m512 hi = _mm512_fmadd_ps(_mm512_set1_ps(0x1.0e4020p-7f), b, _mm512_set1_ps(0x1.573e2ep-5f));
        const __m512 mid = _mm512_fmadd_ps(_mm512_set1_ps(0x1.555e66p-3f), b, _mm512_set1_ps(0x1.fffdb6p-2f));
        const __m512 lo = _mm512_fmadd_ps(_mm512_set1_ps(0x1.ffffecp-1f), b, _mm512_set1_ps(1.0f));
        const __m512 poly = _mm512_fmadd_ps(_mm512_fmadd_ps(hi, u, mid), u, lo);
        const __m512 scaled = _mm512_scalef_ps(poly, n);
        const __mmask16 out_of_range = _mm512_cmp_ps_mask(_mm512_abs_ps(n), _mm512_set1_ps(192.0f), _CMP_GT_OQ);
        if (out_of_range == 0) return scaled;
        const __mmask16 negative = _mm512_cmp_ps_mask(n, _mm512_setzero_ps(), _CMP_LE_OQ);
        const __m512 saturated = _mm512_mask_blend_ps(negative, _mm512_set1_ps(__builtin_inff()), _mm512_setzero_ps());
        return _mm512_mask_blend_ps(out_of_range, scaled, saturated);
    }
};

} // namespace
} // namespace tmill::kernels
