// The AVX-512 intrinsics for the emulated level of the C++ tests (TM_KERNELS_AVX512_EMULATED): SIMDe's
// AVX-512 emulation (Debian/Ubuntu package libsimde-dev, header <simde/x86/avx512.h>) under the native names,
// built with the AVX2 flags only, so the AVX-512 family sources run — and are tested — on a machine without
// AVX-512. SIMDe's FMA maps to the AVX2 FMA, so products round as on real AVX-512 hardware.
#pragma once

#if !__has_include(<simde/x86/avx512.h>)
#error "The C++ tests build the AVX-512 kernels a second time under emulation and need SIMDe: install the libsimde-dev package (apt-get install libsimde-dev), which provides <simde/x86/avx512.h>."
#endif

#define SIMDE_ENABLE_NATIVE_ALIASES
#include <simde/x86/avx512.h>
#include <simde/x86/f16c.h>

#include "kernels/bf16-dot-step.h"
#include "kernels/lane-sum-16.h"

#include <cstdint>
#include <cstring>

// The intrinsics the AVX-512 traits use that Debian 12's SIMDe (0.7.4) lacks, element by element with the native
// semantics (masked lanes are neither read nor written; _mm512_reduce_add_ps in GCC's order: halves down to
// 4 lanes, then lanes (0+2) + (1+3)). Internal linkage, as tiling.h.
namespace tmill::kernels {
namespace {
namespace emulated {

template <typename To, typename From>
To bits(const From & v) {
    static_assert(sizeof(To) == sizeof(From), "same size");
    To r;
    std::memcpy(&r, &v, sizeof r);
    return r;
}
struct f32x16 { float v[16]; };
struct f32x8 { float v[8]; };
struct i16x32 { int16_t v[32]; };
struct i16x16 { int16_t v[16]; };
struct i32x16 { int32_t v[16]; };
struct i8x16 { int8_t v[16]; };

inline __m512 maskz_loadu_ps(__mmask16 k, const void * p) {
    f32x16 r{};
    for (int i = 0; i < 16; ++i)
        if ((k >> i) & 1) std::memcpy(&r.v[i], static_cast<const float *>(p) + i, 4);
    return bits<__m512>(r);
}
inline void mask_storeu_ps(void * p, __mmask16 k, __m512 a) {
    const f32x16 s = bits<f32x16>(a);
    for (int i = 0; i < 16; ++i)
        if ((k >> i) & 1) std::memcpy(static_cast<float *>(p) + i, &s.v[i], 4);
}
inline __m256i maskz_loadu_epi16(__mmask16 k, const void * p) {
    i16x16 r{};
    for (int i = 0; i < 16; ++i)
        if ((k >> i) & 1) std::memcpy(&r.v[i], static_cast<const int16_t *>(p) + i, 2);
    return bits<__m256i>(r);
}
inline float reduce_add_ps(__m512 a) { return lane_sum_16(bits<f32x16>(a).v); }
inline __m256 extractf32x8_ps(__m512 a, int hi) {
    const f32x16 s = bits<f32x16>(a);
    f32x8 r;
    std::memcpy(r.v, s.v + 8 * (hi & 1), sizeof r.v);
    return bits<__m256>(r);
}
inline __m512 cvtph_ps(__m256i h) {
    struct { __m256 lo, hi; } r{_mm256_cvtph_ps(_mm256_castsi256_si128(h)), _mm256_cvtph_ps(_mm256_extracti128_si256(h, 1))};
    return bits<__m512>(r);
}
inline __m256i cvtps_ph_nearest(__m512 a) {
    struct { __m256 lo, hi; } s = bits<decltype(s)>(a);
    return _mm256_set_m128i(_mm256_cvtps_ph(s.hi, _MM_FROUND_TO_NEAREST_INT), _mm256_cvtps_ph(s.lo, _MM_FROUND_TO_NEAREST_INT));
}
inline __m128i cvtepi32_epi8(__m512i a) {
    const i32x16 s = bits<i32x16>(a);
    i8x16 r;
    for (int i = 0; i < 16; ++i) r.v[i] = int8_t(s.v[i]);   // truncation, as vpmovdb
    return bits<__m128i>(r);
}
inline __m512i cvtepu16_epi32(__m256i a) {
    const i16x16 s = bits<i16x16>(a);
    i32x16 r;
    for (int i = 0; i < 16; ++i) r.v[i] = int32_t(uint16_t(s.v[i]));
    return bits<__m512i>(r);
}
inline __m512i cvtepu8_epi32(__m128i a) {
    uint8_t s[16];
    std::memcpy(s, &a, 16);
    i32x16 r;
    for (int i = 0; i < 16; ++i) r.v[i] = int32_t(s[i]);
    return bits<__m512i>(r);
}
inline __m512i cvtepi16_epi32(__m256i a) {
    const i16x16 s = bits<i16x16>(a);
    i32x16 r;
    for (int i = 0; i < 16; ++i) r.v[i] = int32_t(s.v[i]);
    return bits<__m512i>(r);
}
inline __m512i cvtepi8_epi32(__m128i a) {
    const i8x16 s = bits<i8x16>(a);
    i32x16 r;
    for (int i = 0; i < 16; ++i) r.v[i] = int32_t(s.v[i]);
    return bits<__m512i>(r);
}
inline __m512i cvtepu8_epi16(__m256i a) {
    uint8_t s[32];
    std::memcpy(s, &a, 32);
    i16x32 r;
    for (int i = 0; i < 32; ++i) r.v[i] = int16_t(s[i]);
    return bits<__m512i>(r);
}
inline __m512i mask_srli_epi16(__m512i src, __mmask32 k, __m512i a, unsigned n) {
    i16x32 r = bits<i16x32>(src);
    const i16x32 s = bits<i16x32>(a);
    for (int i = 0; i < 32; ++i)
        if ((k >> i) & 1) r.v[i] = n > 15 ? 0 : int16_t(uint16_t(s.v[i]) >> n);
    return bits<__m512i>(r);
}
// int32 <-> float conversions lane by lane with the AVX2 instructions (MXCSR rounding, as the native ones).
inline __m512 cvtepi32_ps(__m512i a) {
    struct { __m256i lo, hi; } s = bits<decltype(s)>(a);
    struct { __m256 lo, hi; } r{_mm256_cvtepi32_ps(s.lo), _mm256_cvtepi32_ps(s.hi)};
    return bits<__m512>(r);
}
inline __m512i cvtps_epi32(__m512 a) {
    struct { __m256 lo, hi; } s = bits<decltype(s)>(a);
    struct { __m256i lo, hi; } r{_mm256_cvtps_epi32(s.lo), _mm256_cvtps_epi32(s.hi)};
    return bits<__m512i>(r);
}
// float <-> double by the AVX conversions, four lanes at a time (MXCSR rounding, as the native ones).
inline __m512d cvtps_pd(__m256 a) {
    struct { __m256d lo, hi; } r{_mm256_cvtps_pd(_mm256_castps256_ps128(a)), _mm256_cvtps_pd(_mm256_extractf128_ps(a, 1))};
    return bits<__m512d>(r);
}
inline __m256 cvtpd_ps(__m512d a) {
    struct { __m256d lo, hi; } s = bits<decltype(s)>(a);
    return _mm256_set_m128(_mm256_cvtpd_ps(s.hi), _mm256_cvtpd_ps(s.lo));
}
// VDPBF16PS lane by lane with the instruction's roundings (NOTE(bf16-dot-step)); SIMDe's adds the two products
// before the accumulator, which rounds differently.
inline __m512 dpbf16_ps(__m512 acc, __m512i a, __m512i b) {
    f32x16 r = bits<f32x16>(acc);
    uint16_t av[32], bv[32];
    std::memcpy(av, &a, 64);
    std::memcpy(bv, &b, 64);
    for (int j = 0; j < 16; ++j) r.v[j] = bf16_dot_step::lane(r.v[j], av, bv, j);
    return bits<__m512>(r);
}
inline __m512i zextsi256_si512(__m256i a) {
    struct { __m256i lo, hi; } r{a, _mm256_setzero_si256()};
    return bits<__m512i>(r);
}

} // namespace emulated
} // namespace
} // namespace tmill::kernels

// Ours replace any alias a newer SIMDe defines under the same name (same semantics, and the order of
// _mm512_reduce_add_ps is then certainly GCC's).
#undef _mm512_maskz_loadu_ps
#define _mm512_maskz_loadu_ps(k, p) ::tmill::kernels::emulated::maskz_loadu_ps(k, p)
#undef _mm512_mask_storeu_ps
#define _mm512_mask_storeu_ps(p, k, a) ::tmill::kernels::emulated::mask_storeu_ps(p, k, a)
#undef _mm256_maskz_loadu_epi16
#define _mm256_maskz_loadu_epi16(k, p) ::tmill::kernels::emulated::maskz_loadu_epi16(k, p)
#undef _mm512_reduce_add_ps
#define _mm512_reduce_add_ps(a) ::tmill::kernels::emulated::reduce_add_ps(a)
#undef _mm512_extractf32x8_ps
#define _mm512_extractf32x8_ps(a, hi) ::tmill::kernels::emulated::extractf32x8_ps(a, hi)
#undef _mm512_cvtph_ps
#define _mm512_cvtph_ps(h) ::tmill::kernels::emulated::cvtph_ps(h)
#undef _mm512_cvtps_ph
#define _mm512_cvtps_ph(a, rounding) ::tmill::kernels::emulated::cvtps_ph_nearest(a)
#undef _mm512_cvtepi32_epi8
#define _mm512_cvtepi32_epi8(a) ::tmill::kernels::emulated::cvtepi32_epi8(a)
#undef _mm512_cvtepu16_epi32
#define _mm512_cvtepu16_epi32(a) ::tmill::kernels::emulated::cvtepu16_epi32(a)
#undef _mm512_mask_srli_epi16
#define _mm512_mask_srli_epi16(src, k, a, n) ::tmill::kernels::emulated::mask_srli_epi16(src, k, a, n)
#undef _mm512_zextsi256_si512
#define _mm512_zextsi256_si512(a) ::tmill::kernels::emulated::zextsi256_si512(a)
#undef _mm512_cvtepi32_ps
#define _mm512_cvtepi32_ps(a) ::tmill::kernels::emulated::cvtepi32_ps(a)
#undef _mm512_cvtps_epi32
#define _mm512_cvtps_epi32(a) ::tmill::kernels::emulated::cvtps_epi32(a)
#undef _mm512_cvtepu8_epi32
#define _mm512_cvtepu8_epi32(a) ::tmill::kernels::emulated::cvtepu8_epi32(a)
#undef _mm512_cvtepi16_epi32
#define _mm512_cvtepi16_epi32(a) ::tmill::kernels::emulated::cvtepi16_epi32(a)
#undef _mm512_cvtepi8_epi32
#define _mm512_cvtepi8_epi32(a) ::tmill::kernels::emulated::cvtepi8_epi32(a)
#undef _mm512_cvtepu8_epi16
#define _mm512_cvtepu8_epi16(a) ::tmill::kernels::emulated::cvtepu8_epi16(a)
#undef _mm512_cvtps_pd
#define _mm512_cvtps_pd(a) ::tmill::kernels::emulated::cvtps_pd(a)
#undef _mm512_cvtpd_ps
#define _mm512_cvtpd_ps(a) ::tmill::kernels::emulated::cvtpd_ps(a)
