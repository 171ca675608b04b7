// The Q4_K/Q5_K super-block headers unpacked in vector registers, two at a time: shared by the K-quant family
// source (matmul-k.cpp) and the AVX-512 Q4_K lanes' panels (avx512-q4-k-lanes.h). AVX2 instructions; internal
// linkage, as tiling.h.
#pragma once

#include <immintrin.h>

namespace tmill::kernels {
namespace {

// Two Q4_K headers (d, dmin, 12 scale bytes), one per 128-bit lane -> per lane the 8 scales (bytes 0..7)
// and the 8 mins (bytes 8..15), as quant::unpack_k4_scales gives them. The 12 bytes are dwords u0, u1, u2
// (dwords 1..3 of the lane): sc0..3 = u0 & 0x3f.., sc4..7 = (u2 & 0x0f..) | ((u0 >> 6) & 0x03..) << 4,
// m0..3 = u1 & 0x3f.., m4..7 = ((u2 >> 4) & 0x0f..) | ((u1 >> 6) & 0x03..) << 4.
__m256i k4_scales_mins(__m256i h) {
    const __m256i u = _mm256_shuffle_epi32(h, 0xa5);                                  // u0 u0 u1 u1
    const __m256i u2 = _mm256_srlv_epi32(_mm256_shuffle_epi32(h, 0xff), _mm256_setr_epi32(0, 0, 0, 4, 0, 0, 0, 4));
    const __m256i low = _mm256_and_si256(u, _mm256_set1_epi8(0x3f));
    const __m256i top = _mm256_slli_epi32(_mm256_and_si256(_mm256_srli_epi32(u, 6), _mm256_set1_epi8(0x03)), 4);
    const __m256i high = _mm256_or_si256(_mm256_and_si256(u2, _mm256_set1_epi8(0x0f)), top);
    return _mm256_blend_epi32(low, high, 0xaa);
}

// The 16-byte headers (d, dmin, the 12 scale bytes) of two Q4_K or Q5_K super-blocks, lo's in the low lane.
__m256i k4_headers(const void * lo, const void * hi) {
    return _mm256_set_m128i(_mm_loadu_si128(static_cast<const __m128i *>(hi)), _mm_loadu_si128(static_cast<const __m128i *>(lo)));
}

} // namespace
} // namespace tmill::kernels
