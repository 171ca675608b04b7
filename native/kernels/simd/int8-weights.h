// Weight decoders shared by the quantized family sources (matmul-q32.cpp, matmul-superblock.cpp, the
// block-step kernels of avx512-block-step.h and kernels/amx/matmul-q8-0.cpp): 32 weights of a block as int8
// bytes in one 256-bit register. Internal linkage, as tiling.h.
#pragma once

#include "quant/iq4-nl.h"
#include "quant/q4-0.h"
#include "quant/q4-1.h"
#include "quant/q5-0.h"
#include "quant/q5-1.h"
#include "quant/q8-0.h"

#include <cstdint>
#include <cstring>

#include <immintrin.h>

namespace tmill::kernels {
namespace {

// The 32 nibbles of a Q4_0-layout qs (16 bytes) as bytes: elements 0..15 in the low lane, 16..31 high.
inline __m256i nibbles32(const uint8_t * qs) {
    const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i *>(qs));
    return _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(packed, 4), packed), _mm256_set1_epi8(0x0f));
}

// Those nibbles' levels in IQ4_NL's non-linear table (held in both 128-bit lanes for the byte shuffle).
inline __m256i iq4nl_levels32(const uint8_t * qs) {
    const __m256i table =
        _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i *>(quant::k_iq4nl_values)));
    return _mm256_shuffle_epi8(table, nibbles32(qs));
}

// 0x10 in byte j where bit j of the little-endian 32-bit qh is set: byte j takes qh's byte j / 8 (a shuffle
// within each 128-bit lane of the broadcast) and tests bit j % 8.
inline __m256i fifth_bits(const uint8_t * qh) {
    uint32_t bits;
    std::memcpy(&bits, qh, 4);
    const __m256i spread = _mm256_shuffle_epi8(_mm256_set1_epi32(int(bits)),
                                               _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,
                                                                2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3));
    const __m256i bit = _mm256_set1_epi64x(int64_t(0x8040201008040201ull));
    return _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit), _mm256_set1_epi8(0x10));
}

// The int8 weights of one block of each 32-element format (int8_weights<Block>::values): against Q8_0
// activations Q8_0 its bytes, Q4_0 the nibble minus 8, IQ4_NL the nibble's table level, Q5_0 the nibble and
// fifth bit minus 16; against Q8_1, whose minimum m enters apart, Q4_1 the unsigned nibble and Q5_1 the
// unsigned nibble and fifth bit (0..15, 0..31).
template <typename Block>
struct int8_weights;
template <>
struct int8_weights<quant::block_q8_0> {
    static __m256i values(const quant::block_q8_0 & b) { return _mm256_loadu_si256(reinterpret_cast<const __m256i *>(b.qs)); }
};
template <>
struct int8_weights<quant::block_q4_0> {
    static __m256i values(const quant::block_q4_0 & b) { return _mm256_sub_epi8(nibbles32(b.qs), _mm256_set1_epi8(8)); }
};
template <>
struct int8_weights<quant::block_iq4_nl> {
    static __m256i values(const quant::block_iq4_nl & b) { return iq4nl_levels32(b.qs); }
};
template <>
struct int8_weights<quant::block_q5_0> {
    static __m256i values(const quant::block_q5_0 & b) {
        return _mm256_sub_epi8(_mm256_or_si256(nibbles32(b.qs), fifth_bits(b.qh)), _mm256_set1_epi8(16));
    }
};

template <>
struct int8_weights<quant::block_q4_1> {
    static __m256i values(const quant::block_q4_1 & b) { return nibbles32(b.qs); }
};
template <>
struct int8_weights<quant::block_q5_1> {
    static __m256i values(const quant::block_q5_1 & b) { return _mm256_or_si256(nibbles32(b.qs), fifth_bits(b.qh)); }
};

} // namespace
} // namespace tmill::kernels
