// The avx512 level's Q4_1 and Q5_1 matmuls (against Q8_1 activations) with the block-step numerics of
// kernels/block-step/step.h and their minimum — per (row, token) and block the exact int32 dot c_b of the block's
// unsigned levels with the activations, acc = fma(d_w * d_x, float(c_b), acc), then acc = fma(m_w, s_x, acc),
// in block order from 0 (block_step_min): ggml-cpu/amx's Q4_1 arithmetic, the AMX tiles' and the scalar
// reference kernels/ref/matmul-q8-block-step.cpp's bits. This header gives the formats (their activation packing
// and panels); the kernels are avx512-block-step.h's: prompts and batches its 16-token prompt tile with the
// minimum (block_step_avx512::tile, through avx512-token-lanes.h), one to k_decode_max_tokens tokens its
// row-streaming kernel (block_step_avx512::rows). Included by avx512-int-dots.h only (AVX-512 + VNNI), internal
// linkage as tiling.h.
//
// NOTE(block-step-min): the lanes. Per (row, block, 16 tokens): 8 dpbusd (the row's unsigned weight quad k
// broadcast, the unsigned operand, against quad k of the 16 tokens' signed activations: the levels are 0..31,
// so no bias or correction), in two chains, one conversion, one multiply (d_w * d_x) and two FMAs. llama.cpp's
// x86 order, which these formats followed before (8 float lanes per (row, token) and block, the minimum's
// products added apart), cost 8 conversions and 8 FMAs per (row, block, 16 tokens) instead, and SmolLM2-135M
// Q4_1's prefill spent 57 % of its time there on the Xeon (Sapphire Rapids), 0.57x llama.cpp's AMX build.
#pragma once

#include "kernels/simd/avx512-block-step.h"
#include "quant/q4-1.h"
#include "quant/q5-1.h"
#include "quant/q8-1.h"

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace tmill::kernels {
namespace {
namespace block_step_min_avx512 {

using namespace avx512_vnni;
using quant::block_q8_1;

// A packed 16-token group, per block: 8 rows of 64 bytes (row k: bytes 4k..4k+3 of every token, signed), the
// 16 F32 scales d_x, then the 16 F32 sums s_x (zero past the group's tokens, like their lanes).
constexpr size_t k_dx_at = k_pack_quad_bytes;
constexpr size_t k_sx_at = k_dx_at + sizeof(float) * k_pack_tokens;
constexpr size_t k_group_block = k_sx_at + sizeof(float) * k_pack_tokens;

// Per (row, block) of a panel: the block's scale and minimum as F32.
struct entry {
    float dw, m;
};

// Q4_1 or Q5_1: a format of token_lanes_avx512::prompt_rows (its contract in avx512-token-lanes.h) and of
// block_step_avx512::rows (block, act, has_min, reference, values).
template <typename Block, matmul_rows_kernel * Reference>
struct format {
    using block = Block;
    using act = block_q8_1;
    using entry = block_step_min_avx512::entry;
    static constexpr bool has_min = true;
    static constexpr matmul_rows_kernel * reference = Reference;
    static constexpr bool in_place = false;
    static constexpr size_t staging_bytes = 32;
    static constexpr size_t pack_block = k_group_block;
    static constexpr size_t sx_at = k_sx_at;
    static constexpr int tile_rows = 8;   // rows sharing each activation load: 8 + 8 of the 32 zmm registers
    static constexpr int panel_unit = tile_rows;

    static __m256i values(const Block & b) { return int8_weights<Block>::values(b); }

    static void pack(const char * x, size_t xb, int n, int64_t nb, uint8_t * dst) {
        for (int64_t b = 0; b < nb; ++b) {
            uint8_t * out = dst + size_t(b) * k_group_block;
            __m256i q[k_pack_tokens];
            float dx[k_pack_tokens] = {}, sx[k_pack_tokens] = {};
            for (int t = 0; t < k_pack_tokens; ++t) {
                if (t < n) {
                    const block_q8_1 & blk = reinterpret_cast<const block_q8_1 *>(x + size_t(t) * xb)[b];
                    q[t] = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(blk.qs));
                    dx[t] = _cvtsh_ss(blk.d);
                    sx[t] = _cvtsh_ss(blk.s);
                } else {
                    q[t] = _mm256_setzero_si256();
                }
            }
            store_quads(q, out);
            std::memcpy(out + k_dx_at, dx, sizeof dx);
            std::memcpy(out + k_sx_at, sx, sizeof sx);
        }
    }

    static void prepare_panel(const char * w, size_t wb, int64_t rows, int64_t nb, entry * meta, int8_t * staging) {
        for (int64_t r = 0; r < rows; ++r) {
            const auto * blk = reinterpret_cast<const block *>(w + size_t(r) * wb);
            for (int64_t b = 0; b < nb; ++b) {
                meta[r * nb + b] = {_cvtsh_ss(blk[b].d), _cvtsh_ss(blk[b].m)};
                _mm256_storeu_si256(reinterpret_cast<__m256i *>(staging + size_t(r * nb + b) * staging_bytes), values(blk[b]));
            }
        }
    }

    // R rows x the group's tokens in L's lanes (token_lanes_avx512::prompt_rows' tile contract): the block step's
    // prompt tile with the minimum (block_step_avx512::tile).
    template <typename L, int R>
    static void tile(const int8_t * q, size_t rs, size_t bs, const entry * meta, int64_t nb, const uint8_t * packed, float * out,
                     const char * pf, int pf_lines) {
        block_step_avx512::tile<format, L, R>(q, rs, bs, meta, nb, packed, out, pf, pf_lines);
    }
};

} // namespace block_step_min_avx512

namespace block_step_avx512 {
template <>
struct format_of<quant::block_q4_1> { using type = block_step_min_avx512::format<quant::block_q4_1, block_step_ref::matmul_q4_1>; };
template <>
struct format_of<quant::block_q5_1> { using type = block_step_min_avx512::format<quant::block_q5_1, block_step_ref::matmul_q5_1>; };
} // namespace block_step_avx512

} // namespace
} // namespace tmill::kernels
