// Weight decoders shared by the quantized family sources (matmul-q32.cpp, matmul-superblock.cpp): 32 weights
// of a block as int8 bytes in one 256-bit register. Internal linkage, as tiling.h.
#pragma once

#include "quant/iq4-nl.h"

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

} // namespace
} // namespace tmill::kernels
