// Q6_K's unsigned 6-bit levels q (0..63) in AVX-512 registers, decoded once for the AVX-512 levels' one-row kernel
// (avx512-int-dots.h q6_k_lanes) and the AMX conversion of the rows (kernels/amx/matmul-q6-k.cpp). For the
// AVX-512 levels' translation units only, in a namespace that says so (test/native/isa-isolation.test.ts);
// internal linkage as kernels/tiling.h.
#pragma once

#include "quant/q6-k.h"

#include <immintrin.h>

namespace tmill::kernels {
namespace {
namespace avx512_vnni {

// The levels of 128-element half h of a super-block (quant/q6-k.h's layout) in element order: lo elements
// 128h .. 128h + 63 (the low nibbles of ql with qh's bit pairs 0 and 2), hi elements 128h + 64 .. 128h + 127 (the
// high nibbles, bit pairs 4 and 6); in each, the zmm's high half sits 32 elements after its low half.
inline void q6_k_levels(const quant::block_q6_k & w, int h, __m512i & lo, __m512i & hi) {
    const __m512i low4 = _mm512_set1_epi8(0x0f), bits45 = _mm512_set1_epi8(0x30);
    const __m512i ql = _mm512_loadu_si512(w.ql + 64 * h);
    const __m512i hb = _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(w.qh + 32 * h)));
    const __m512i qh = _mm512_mask_srli_epi16(hb, 0xFFFF0000u, hb, 2);
    // The bit pairs shifted straight to bits 4 and 5 of their bytes (the 16-bit shift's carries across bytes land
    // outside them), as avx512-q6-k-x16.h's levels do.
    lo = _mm512_or_si512(_mm512_and_si512(ql, low4), _mm512_and_si512(_mm512_slli_epi16(qh, 4), bits45));
    hi = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(ql, 4), low4), _mm512_and_si512(qh, bits45));
}

} // namespace avx512_vnni
} // namespace
} // namespace tmill::kernels
