// The activations of the block-step kernels (kernels/block-step/step.h) repacked for 16-token products: the
// AMX tiles' B operand (kernels/amx/matmul-q8-0.cpp) and the AVX-512 prompt tile's zmm lanes
// (kernels/simd/avx512-block-step.h) read the same layout. Per 32-block of 16 tokens: 8 rows of 64 bytes,
// row k holding bytes 4k..4k+3 of every token (byte e of quad k of token t at 64 k + 4 t + e: the VNNI
// layout, one int32 lane or tile column per token), XORed with Bias (0 for TDPBSSD's signed bytes, 0x80 for
// vpdpbusd's unsigned x + 128), then the 16 activation scales as F32 (zero past the group's tokens). For the
// AVX-512 levels' translation units only (tm_kernels_avx512, tm_kernels_amx and their emulated builds), in a
// namespace that says so (test/native/isa-isolation.test.ts checks which functions use 512-bit registers);
// internal linkage as kernels/tiling.h.
#pragma once

#include "quant/q8-0.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>

#include <immintrin.h>

namespace tmill::kernels {
namespace {
namespace avx512_vnni {

constexpr int k_pack_tokens = 16;
constexpr int k_pack_quads = quant::qk8_0 / 4;                                   // 8 rows per block
constexpr size_t k_pack_quad_bytes = size_t(k_pack_quads) * 4 * k_pack_tokens;   // 512
constexpr size_t k_pack_block = k_pack_quad_bytes + sizeof(float) * k_pack_tokens;

// Tokens x .. x + n - 1 (row stride xb, 1 <= n <= 16), nb blocks each, into pack (nb * k_pack_block bytes).
// The lanes of tokens past n are zero bytes (after the bias), so a full-width load reads defined values.
template <uint8_t Bias>
void pack_tokens(const char * x, size_t xb, int n, int64_t nb, uint8_t * pack) {
    constexpr uint32_t bias = uint32_t(Bias) * 0x01010101u;
    for (int64_t b = 0; b < nb; ++b) {
        uint8_t * dst = pack + size_t(b) * k_pack_block;
        float scales[k_pack_tokens] = {};
        if (n < k_pack_tokens) std::memset(dst, 0, k_pack_quad_bytes);
        for (int t = 0; t < n; ++t) {
            const quant::block_q8_0 * blk = reinterpret_cast<const quant::block_q8_0 *>(x + size_t(t) * xb) + b;
            for (int k = 0; k < k_pack_quads; ++k) {
                uint32_t q;
                std::memcpy(&q, blk->qs + 4 * k, 4);
                q ^= bias;
                std::memcpy(dst + 64 * k + 4 * t, &q, 4);
            }
            scales[t] = _cvtsh_ss(blk->d);
        }
        std::memcpy(dst + k_pack_quad_bytes, scales, sizeof scales);
    }
}

// A per-thread scratch buffer, grown to the largest request once and never per step (no allocation in the
// per-token loop once warm). nullptr when the allocation fails: the callers then run the scalar reference,
// which gives the same bits. Slot picks one of a thread's independent buffers. A type of this header's own
// (internal linkage) rather than a std::unique_ptr instantiation, which the linker could share with code
// built without these ISA flags.
struct scratch_buffer {
    uint8_t * data = nullptr;
    size_t capacity = 0;
    ~scratch_buffer() { delete[] data; }
};

template <int Slot>
uint8_t * scratch_space(size_t bytes) {
    static thread_local scratch_buffer buf;
    if (buf.capacity < bytes) {
        delete[] buf.data;
        buf.data = new (std::nothrow) uint8_t[bytes];
        buf.capacity = buf.data ? bytes : 0;
    }
    return buf.data;
}

} // namespace avx512_vnni
} // namespace
} // namespace tmill::kernels
