// The activations of the block-step kernels (kernels/block-step/step.h) repacked for the AVX-512 prompt tile's
// 16-token zmm lanes (kernels/simd/avx512-block-step.h). Per 32-block of 16 tokens: 8 rows of 64 bytes, row k
// holding bytes 4k..4k+3 of every token (byte e of quad k of token t at 64 k + 4 t + e: the VNNI layout, one
// int32 lane per token), as x + 128 (vpdpbusd's unsigned operand), then the 16 activation scales as F32 (zero
// past the group's tokens). The same 16 x 8 dword transpose (store_quads) puts the AMX tiles' weights in VNNI
// order (kernels/amx/matmul-q8-0.cpp) and other lanes' operands. For the AVX-512 levels' translation units only
// (tm_kernels_avx512, tm_kernels_amx and their emulated builds), in a namespace that says so
// (test/native/isa-isolation.test.ts checks which functions use 512-bit registers); internal linkage as
// kernels/tiling.h.
#pragma once

#include "quant/q8-0.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>

#include <immintrin.h>

// GCC 12's _mm512_inserti64x4 merges into a self-initialised "undefined" vector, which -Wmaybe-uninitialized
// reports (as avx512-traits.h says; the AMX sources include this header without it).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace tmill::kernels {
namespace {
namespace avx512_vnni {

constexpr int k_pack_tokens = 16;
constexpr int k_pack_quads = quant::qk8_0 / 4;                                   // 8 rows per block
constexpr size_t k_pack_quad_bytes = size_t(k_pack_quads) * 4 * k_pack_tokens;   // 512
constexpr size_t k_pack_block = k_pack_quad_bytes + sizeof(float) * k_pack_tokens;

// The permute indices of one transpose stage (pack_tokens): output register b of a pair takes, in lane l,
// lane (l with bit Bit := b) of the pair's register whose index bit Bit is l's bit Bit (16 + ...: the second).
struct stage_indices {
    alignas(64) int32_t lane[2][16];
};
constexpr stage_indices stage_indices_for(int bit) {
    stage_indices s{};
    for (int b = 0; b < 2; ++b)
        for (int l = 0; l < 16; ++l) s.lane[b][l] = ((l >> bit) & 1) * 16 + ((l & ~(1 << bit)) | (b << bit));
    return s;
}

// One stage of a dword transpose of Regs registers (8: the 16 x 8 of store_quads; 16: a 16 x 16): swaps bit Bit
// of the register index with bit Bit of the lane index, for the register pairs that differ in that bit.
template <int Bit, int Regs = 8>
inline void transpose_stage(__m512i * v) {
    static constexpr stage_indices s = stage_indices_for(Bit);
    const __m512i lo = _mm512_load_si512(s.lane[0]), hi = _mm512_load_si512(s.lane[1]);
    for (int r = 0; r < Regs; ++r) {
        if (r & (1 << Bit)) continue;
        const __m512i a = v[r], b = v[r | (1 << Bit)];
        v[r] = _mm512_permutex2var_epi32(a, lo, b);
        v[r | (1 << Bit)] = _mm512_permutex2var_epi32(a, hi, b);
    }
}

// 16 tokens' 32 bytes each (q[t]) as 8 rows of 64 bytes at dst, row k holding bytes 4k..4k+3 of every token:
// a 16 x 8 dword transpose in registers. Register i starts as tokens i and i + 8's 8 quads (register bits =
// token bits 0-2, lane bits = token bit 3 and the quad's 3 bits), and three stages swap the register bits
// with the quad's lane bits, leaving register k = quad k and lane t = token t (4-byte copies one token and
// quad at a time were 4 % of a 512-token prefill).
inline void store_quads(const __m256i * q, uint8_t * dst) {
    static_assert(k_pack_quads == 8 && k_pack_tokens == 16, "the transpose's register and lane bits");
    __m512i v[k_pack_quads];
    for (int i = 0; i < k_pack_quads; ++i) v[i] = _mm512_inserti64x4(_mm512_castsi256_si512(q[i]), q[i + 8], 1);
    transpose_stage<0>(v);
    transpose_stage<1>(v);
    transpose_stage<2>(v);
    for (int k = 0; k < k_pack_quads; ++k) _mm512_storeu_si512(dst + 64 * k, v[k]);
}

// Tokens x .. x + n - 1 (row stride xb, 1 <= n <= 16), nb blocks each, into pack (nb * k_pack_block bytes).
// The lanes of tokens past n are zero bytes (after the bias), so a full-width load reads defined values.
inline void pack_tokens(const char * x, size_t xb, int n, int64_t nb, uint8_t * pack) {
    const __m256i bias = _mm256_set1_epi8(char(0x80));
    for (int64_t b = 0; b < nb; ++b) {
        uint8_t * dst = pack + size_t(b) * k_pack_block;
        __m256i q[k_pack_tokens];
        float scales[k_pack_tokens] = {};
        for (int t = 0; t < k_pack_tokens; ++t) {
            if (t < n) {
                const quant::block_q8_0 * blk = reinterpret_cast<const quant::block_q8_0 *>(x + size_t(t) * xb) + b;
                q[t] = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(blk->qs)), bias);
                scales[t] = _cvtsh_ss(blk->d);
            } else {
                q[t] = _mm256_setzero_si256();
            }
        }
        store_quads(q, dst);
        std::memcpy(dst + k_pack_quad_bytes, scales, sizeof scales);
    }
}

// A per-thread scratch buffer, grown to the largest request once and never per step (no allocation in the
// per-token loop once warm), 64-byte aligned: a load or an AMX tile row that straddles two cache lines costs
// two (tile loads from a 16-byte aligned pack ran three times slower). nullptr when the allocation fails: the
// callers then run the scalar reference, which gives the same bits. Slot picks one of a thread's independent
// buffers. A type of this header's own (internal linkage) rather than a std::unique_ptr instantiation, which
// the linker could share with code built without these ISA flags.
constexpr std::align_val_t k_scratch_align{64};

struct scratch_buffer {
    uint8_t * data = nullptr;
    size_t capacity = 0;
    ~scratch_buffer() { operator delete[](data, k_scratch_align); }
};

template <int Slot>
uint8_t * scratch_space(size_t bytes) {
    static thread_local scratch_buffer buf;
    if (buf.capacity < bytes) {
        operator delete[](buf.data, k_scratch_align);
        buf.data = static_cast<uint8_t *>(operator new[](bytes, k_scratch_align, std::nothrow));
        buf.capacity = buf.data ? bytes : 0;
    }
    return buf.data;
}

} // namespace avx512_vnni
} // namespace
} // namespace tmill::kernels
