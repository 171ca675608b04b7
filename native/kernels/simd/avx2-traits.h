// The AVX2 (+ FMA, F16C) vector traits the family sources in kernels/simd/ are written against: 8 float lanes,
// loads and stores of a full vector or of its first n lanes, the reductions in the orders our AVX2 numerics
// follow, and the few sequences that are this ISA's own (llama.cpp's AVX2 expf, the Q8 lane sums by
// maddubs). Internal linkage (anonymous namespace), as tiling.h: each ISA's copy stays in its own objects.
#pragma once

#include "kernels/hsum.h"

#include <immintrin.h>

#include <cstdint>

namespace tmill::kernels {
namespace {

struct avx2_traits {
    static constexpr const char * name = "avx2";
    static constexpr int width = 8;
    using f32 = __m256;
    using mask = __m256i;   // lane i active when its sign bit is set

    static f32 zero() { return _mm256_setzero_ps(); }
    static f32 set1(float v) { return _mm256_set1_ps(v); }
    static f32 load(const float * p) { return _mm256_loadu_ps(p); }
    static void store(float * p, f32 v) { _mm256_storeu_ps(p, v); }
    static f32 add(f32 a, f32 b) { return _mm256_add_ps(a, b); }
    static f32 sub(f32 a, f32 b) { return _mm256_sub_ps(a, b); }
    static f32 mul(f32 a, f32 b) { return _mm256_mul_ps(a, b); }
    static f32 div(f32 a, f32 b) { return _mm256_div_ps(a, b); }
    static f32 max(f32 a, f32 b) { return _mm256_max_ps(a, b); }
    static f32 min(f32 a, f32 b) { return _mm256_min_ps(a, b); }
    static f32 abs(f32 a) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), a); }
    static f32 fmadd(f32 a, f32 b, f32 c) { return _mm256_fmadd_ps(a, b, c); }
    static f32 load_f16(const uint16_t * p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i *>(p))); }
    static f32 load_bf16(const uint16_t * p) {
        const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i *>(p));
        return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
    }
    static f32 round_f16(f32 x) { return _mm256_cvtph_ps(_mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT)); }
    static void store_f16(uint16_t * p, f32 x) {
        _mm_storeu_si128(reinterpret_cast<__m128i *>(p), _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT));
    }
    static bool has_nan(f32 x) { return _mm256_movemask_ps(_mm256_cmp_ps(x, x, _CMP_UNORD_Q)) != 0; }

    // The first n lanes (0 <= n <= 8); inactive lanes load as zero and are not stored.
    static mask first(int64_t n) { return _mm256_cmpgt_epi32(_mm256_set1_epi32(int32_t(n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)); }
    static f32 load(const float * p, mask m) { return _mm256_maskload_ps(p, m); }
    static void store(float * p, f32 v, mask m) { _mm256_maskstore_ps(p, m, v); }

    // Sum of the lanes in hsum8's order (halves, then pairs of lanes).
    static float reduce_add(f32 v) { return hsum8(v); }
    // GGML_F32_VEC_REDUCE's last step on AVX: halves added, then two horizontal adds.
    static float reduce_add_ggml(f32 v) {
        const __m128 halves = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
        const __m128 pairs = _mm_hadd_ps(halves, halves);
        return _mm_cvtss_f32(_mm_hadd_ps(pairs, pairs));
    }
    // Lane i: the largest lane of v[i] for 8 vectors (max is exact in any order): halves, then pairs of lanes.
    static f32 max_lanes(const f32 * v) {
        f32 w[4], x[2];
        for (int i = 0; i < 4; ++i)   // w[i]: v[2i]'s 4 half maxima (lanes 0-3), v[2i+1]'s (4-7)
            w[i] = _mm256_max_ps(_mm256_permute2f128_ps(v[2 * i], v[2 * i + 1], 0x20), _mm256_permute2f128_ps(v[2 * i], v[2 * i + 1], 0x31));
        for (int i = 0; i < 2; ++i)   // per 128-bit lane: (0, 2) and (1, 3) of two vectors
            x[i] = _mm256_max_ps(_mm256_shuffle_ps(w[2 * i], w[2 * i + 1], 0x44), _mm256_shuffle_ps(w[2 * i], w[2 * i + 1], 0xEE));
        // lanes 0-3: v0, v2, v4, v6; lanes 4-7: v1, v3, v5, v7
        const f32 z = _mm256_max_ps(_mm256_shuffle_ps(x[0], x[1], 0x88), _mm256_shuffle_ps(x[0], x[1], 0xDD));
        return _mm256_permutevar8x32_ps(z, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    }
    // Lane i: reduce_add_ggml(v[i]) for 8 vectors, by the same pairs: the halves (lane j + lane j + 4), then
    // (h0 + h1) and (h2 + h3), then their sum — two vectors' steps per instruction.
    static f32 reduce_add_ggml_lanes(const f32 * v) {
        f32 w[4];
        for (int i = 0; i < 4; ++i)   // w[i]: the halves of v[2i] (lanes 0-3), of v[2i+1] (4-7)
            w[i] = _mm256_add_ps(_mm256_permute2f128_ps(v[2 * i], v[2 * i + 1], 0x20), _mm256_permute2f128_ps(v[2 * i], v[2 * i + 1], 0x31));
        // lanes 0-3: v0, v2, v4, v6; lanes 4-7: v1, v3, v5, v7
        const f32 z = _mm256_hadd_ps(_mm256_hadd_ps(w[0], w[1]), _mm256_hadd_ps(w[2], w[3]));
        return _mm256_permutevar8x32_ps(z, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    }
    // The lowest lane equal to s, or -1.
    static int first_equal(f32 v, float s) {
        const int m = _mm256_movemask_ps(_mm256_cmp_ps(v, _mm256_set1_ps(s), _CMP_EQ_OQ));
        return m ? __builtin_ctz(unsigned(m)) : -1;
    }
    static float reduce_max(f32 v) {
        __m128 h = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
        h = _mm_max_ps(h, _mm_movehl_ps(h, h));
        h = _mm_max_ss(h, _mm_movehdup_ps(h));
        return _mm_cvtss_f32(h);
    }

    // The float matmul's n_in % 8 tail: added one product at a time after the horizontal sum (not in lanes).
    static constexpr bool tail_in_lanes = false;

    // Tile shapes (kernels/tiling.h rows per tile): as many rows as the registers hold for several tokens. One
    // token (decode) takes sets of rows spread over the range instead (NOTE(one-token-sets)): adjacent rows read
    // side by side come from memory at about half the rate.
    // F16 weights as the other float types here (f16_rows_many: avx512-traits.h).
    static constexpr int float_rows_many = 2, f16_rows_many = float_rows_many;
    static constexpr int q8_sets_one = 4, q8_rows_many = 2, q4_rows_many = 2;

    // Rope: (x1, x0) in each pair, and lane 2i = a - b, lane 2i+1 = a + b.
    static f32 swap_pairs(f32 a) { return _mm256_permute_ps(a, 0xB1); }
    static f32 sub_even_add_odd(f32 a, f32 b) { return _mm256_addsub_ps(a, b); }
    static f32 even_odd(f32 even, f32 odd) { return _mm256_blend_ps(even, odd, 0xAA); }   // even lanes of one, odd of the other

    // 32 floats (4 vectors) to bytes by cvtps (MXCSR round to nearest even); |values| <= 127.
    static void store_q8(int8_t * out, const f32 * v) {
        const __m256i q0 = _mm256_cvtps_epi32(v[0]), q1 = _mm256_cvtps_epi32(v[1]);
        const __m256i q2 = _mm256_cvtps_epi32(v[2]), q3 = _mm256_cvtps_epi32(v[3]);
        const __m256i q = _mm256_packs_epi16(_mm256_packs_epi32(q0, q1), _mm256_packs_epi32(q2, q3));
        const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);   // undoes the packs' lane interleave
        _mm256_storeu_si256(reinterpret_cast<__m256i *>(out), _mm256_permutevar8x32_epi32(q, order));
    }

    // Doubles, half the float lanes each, and lane selects (glibc's expf, simd/expf-glibc.h).
    using f64 = __m256d;
    static f64 widen_lo(f32 v) { return _mm256_cvtps_pd(_mm256_castps256_ps128(v)); }
    static f64 widen_hi(f32 v) { return _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)); }
    static f32 narrow_f64(f64 lo, f64 hi) { return _mm256_set_m128(_mm256_cvtpd_ps(hi), _mm256_cvtpd_ps(lo)); }
    static f64 set1_f64(double v) { return _mm256_set1_pd(v); }
    static f64 sub_f64(f64 a, f64 b) { return _mm256_sub_pd(a, b); }
    static f64 mul_f64(f64 a, f64 b) { return _mm256_mul_pd(a, b); }
    static f64 fmadd_f64(f64 a, f64 b, f64 c) { return _mm256_fmadd_pd(a, b, c); }
    static f64 fmsub_f64(f64 a, f64 b, f64 c) { return _mm256_fmsub_pd(a, b, c); }
    // Per lane, with b its IEEE bits: table[b % 32] + (b << 47), as a double.
    static f64 exp2_32nds(const uint64_t * table, f64 shifted) {
        const __m256i b = _mm256_castpd_si256(shifted);
        const __m256i entry = _mm256_i64gather_epi64(reinterpret_cast<const long long *>(table), _mm256_and_si256(b, _mm256_set1_epi64x(31)), 8);
        return _mm256_castsi256_pd(_mm256_add_epi64(entry, _mm256_slli_epi64(b, 47)));
    }
    static f32 select_less(f32 a, f32 b, f32 then, f32 otherwise) { return _mm256_blendv_ps(otherwise, then, _mm256_cmp_ps(a, b, _CMP_LT_OQ)); }
    static f32 select_nan(f32 x, f32 then, f32 otherwise) { return _mm256_blendv_ps(otherwise, then, _mm256_cmp_ps(x, x, _CMP_UNORD_Q)); }

    // e^x as llama.cpp's AVX2 vectorised expf computes it (ARM optimized-routines constants): n = round(x /
    // ln2) through the 1.5·2^23 shift, b = x - n·ln2 in two parts, a degree-5 polynomial, 2^n built in the
    // exponent bits as k, result k + k·poly; |n| > 126 takes the split-scale path, |n| > 192 saturates.
    static f32 exp_llama(f32 x) {
        const __m256 shift = _mm256_set1_ps(0x1.8p23f);
        const __m256 z = _mm256_fmadd_ps(x, _mm256_set1_ps(0x1.715476p+0f), shift);
        const __m256 n = _mm256_sub_ps(z, shift);
        const __m256 b = _mm256_fnmadd_ps(n, _mm256_set1_ps(0x1.7f7d1cp-20f), _mm256_fnmadd_ps(n, _mm256_set1_ps(0x1.62e4p-1f), x));
        const __m256i e = _mm256_slli_epi32(_mm256_castps_si256(z), 23);
        const __m256 k = _mm256_castsi256_ps(_mm256_add_epi32(e, _mm256_castps_si256(_mm256_set1_ps(1.0f))));
        const __m256 abs_n = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), n);
        const __m256 needs_split = _mm256_cmp_ps(abs_n, _mm256_set1_ps(126.0f), _CMP_GT_OQ);
        const __m256 u = _mm256_mul_ps(b, b);
        const __m256 hi = _mm256_fmadd_ps(_mm256_set1_ps(0x1.0e4020p-7f), b, _mm256_set1_ps(0x1.573e2ep-5f));
        const __m256 mid = _mm256_fmadd_ps(_mm256_set1_ps(0x1.555e66p-3f), b, _mm256_set1_ps(0x1.fffdb6p-2f));
        const __m256 j = _mm256_fmadd_ps(_mm256_fmadd_ps(hi, u, mid), u, _mm256_mul_ps(_mm256_set1_ps(0x1.ffffecp-1f), b));
        if (!_mm256_movemask_ps(needs_split)) return _mm256_fmadd_ps(j, k, k);
        const __m256i g = _mm256_and_si256(_mm256_castps_si256(_mm256_cmp_ps(n, _mm256_setzero_ps(), _CMP_LE_OQ)),
                                           _mm256_set1_epi32(int32_t(0x82000000u)));
        const __m256 s1 = _mm256_castsi256_ps(_mm256_add_epi32(g, _mm256_set1_epi32(0x7f000000)));
        const __m256 s2 = _mm256_castsi256_ps(_mm256_sub_epi32(e, g));
        const __m256 saturate = _mm256_cmp_ps(abs_n, _mm256_set1_ps(192.0f), _CMP_GT_OQ);
        const __m256 split = _mm256_mul_ps(_mm256_fmadd_ps(s2, j, s2), s1);
        const __m256 in_range = _mm256_or_ps(_mm256_and_ps(needs_split, split), _mm256_andnot_ps(needs_split, _mm256_fmadd_ps(k, j, k)));
        return _mm256_or_ps(_mm256_and_ps(saturate, _mm256_mul_ps(s1, s1)), _mm256_andnot_ps(saturate, in_range));
    }
};

} // namespace
} // namespace tmill::kernels
