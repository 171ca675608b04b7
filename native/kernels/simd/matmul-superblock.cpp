// Matmul rows for Q2_K, Q3_K and IQ4_XS weights against Q8_K activations, once per ISA.
//
// NOTE(superblock-matmul): per (row, super-block) the weights are decoded 32 at a time (chunk c: elements
// 32c..32c+31) into int8, shared by the tile's tokens: Q2_K the unsigned 2-bit value, Q3_K the 2 low bits and
// the high bit minus 4, IQ4_XS the nibble's level in the non-linear table. int_dots::q8_lanes gives exact
// int32 lanes of 4 products each, so lanes 0-3 hold sub-block 2c's 16 elements and lanes 4-7 sub-block
// 2c+1's (IQ4_XS: both halves carry the 32-element sub-block's one scale); each lane is multiplied by its
// sub-block scale into an int32 sum per (row, token). Per super-block acc = fma(d_x * d_w, float(sum), acc),
// preceded for Q2_K by acc = fma(-d_x * dmin_w, float(lanes), acc) with lane i = m[2i] * bsums[2i] +
// m[2i+1] * bsums[2i+1] (the mins through the activations' 16-element sums); one hsum8 at the end. These are
// the integer lanes and float operations of ggml's x86 vec_dots, so the results equal llama.cpp's bit for bit
// (measured on the synthetic parity models). Every pair sees the same operations in every tile shape: batch
// invariant.
#include "kernels/simd/int8-weights.h"
#include "kernels/simd/isa.h"
#include "kernels/tiling.h"
#include "quant/iq4-xs.h"
#include "quant/q2-k.h"
#include "quant/q3-k.h"
#include "quant/q8-k.h"

namespace tmill::kernels::TM_KERNELS_LEVEL {

namespace {

using quant::qk_k;

float f16(uint16_t h) { return _cvtsh_ss(h); }
__m256i load256(const void * p) { return _mm256_loadu_si256(static_cast<const __m256i *>(p)); }

// Element 32c + l of a 2-bit field laid out as Q2_K's qs (element 128h + 32k + l in bits 2k of qs[32h + l]).
__m256i two_bits(const uint8_t * qs, int c) {
    return _mm256_and_si256(_mm256_srli_epi16(load256(qs + 32 * (c / 4)), 2 * (c % 4)), _mm256_set1_epi8(3));
}

// Each format: its block type, whether it has mins (Q2_K), its 16 sub-block scales (16 elements each; IQ4_XS
// repeats each 32-element scale) and chunk c's 32 weights as int8.
struct q2_k_format {
    using block = quant::block_q2_k;
    static constexpr bool has_min = true;
    static void scales(const block & b, int8_t * sc) {
        for (int s = 0; s < 16; ++s) sc[s] = int8_t(b.scales[s] & 0x0f);
    }
    static __m256i weights(const block & b, int c) { return two_bits(b.qs, c); }
    // The 16 4-bit mins as int16, for a madd with the activations' 16-element sums.
    static __m256i mins16(const block & b) {
        const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i *>(b.scales));
        return _mm256_cvtepi8_epi16(_mm_and_si128(_mm_srli_epi16(packed, 4), _mm_set1_epi8(0x0f)));
    }
};
struct q3_k_format {
    using block = quant::block_q3_k;
    static constexpr bool has_min = false;
    static void scales(const block & b, int8_t * sc) { quant::unpack_q3k_scales(b.scales, sc); }
    // The high bit of element 32c + l is bit c of hmask[l]; 0 subtracts 4.
    static __m256i weights(const block & b, int c) {
        const __m256i high = _mm256_and_si256(_mm256_srli_epi16(load256(b.hmask), c), _mm256_set1_epi8(1));
        return _mm256_sub_epi8(_mm256_or_si256(two_bits(b.qs, c), _mm256_slli_epi16(high, 2)), _mm256_set1_epi8(4));
    }
};
struct iq4_xs_format {
    using block = quant::block_iq4_xs;
    static constexpr bool has_min = false;
    static void scales(const block & b, int8_t * sc) {
        for (int j = 0; j < 8; ++j) sc[2 * j] = sc[2 * j + 1] = int8_t(quant::iq4xs_scale(b, j) - 32);
    }
    static __m256i weights(const block & b, int c) { return iq4nl_levels32(b.qs + 16 * c); }
};

template <typename F, int R, int T>
void tile_superblock(const char * w, size_t wb, const char * x, size_t xb, int64_t n_in, float * y, int64_t ldy) {
    using W = typename F::block;
    const int64_t nb = n_in / qk_k;
    tile_acc<R, T> tile;
    auto & acc = tile.v;
    const __m256i pair_lanes = _mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1);
    for (int64_t b = 0; b < nb; ++b) {
        const quant::block_q8_k * xs[T];
        for (int t = 0; t < T; ++t) xs[t] = reinterpret_cast<const quant::block_q8_k *>(x + size_t(t) * xb) + b;
        for (int r = 0; r < R; ++r) {
            const W & wblk = *(reinterpret_cast<const W *>(w + size_t(r) * wb) + b);
            int8_t sc[24] = {};   // (16) sub-block scales; read 8 at a time from 2c
            F::scales(wblk, sc);
            __m256i isum[T];
            for (int t = 0; t < T; ++t) isum[t] = _mm256_setzero_si256();
            for (int c = 0; c < 8; ++c) {
                const __m256i wq = F::weights(wblk, c);
                const __m256i wabs = _mm256_sign_epi8(wq, wq);
                const __m256i lane_scale = _mm256_permutevar8x32_epi32(
                    _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i *>(sc + 2 * c))), pair_lanes);
                for (int t = 0; t < T; ++t) {
                    const __m256i p = int_dots::q8_lanes(wabs, wq, load256(xs[t]->qs + 32 * c));
                    isum[t] = _mm256_add_epi32(isum[t], _mm256_mullo_epi32(p, lane_scale));
                }
            }
            const float d = f16(wblk.d);
            for (int t = 0; t < T; ++t) {
                if constexpr (F::has_min) {
                    const __m256i prod = _mm256_madd_epi16(F::mins16(wblk), load256(xs[t]->bsums));
                    acc[r][t] = _mm256_fmadd_ps(_mm256_set1_ps(-xs[t]->d * f16(wblk.dmin)), _mm256_cvtepi32_ps(prod), acc[r][t]);
                }
                acc[r][t] = _mm256_fmadd_ps(_mm256_set1_ps(xs[t]->d * d), _mm256_cvtepi32_ps(isum[t]), acc[r][t]);
            }
        }
    }
    tile.store(y, ldy);
}

template <typename F>
struct superblock_kernel {
    template <int R, int T>
    struct of {
        static void fn(const char * w, size_t wb, const char * x, size_t xb, int64_t n, float * y, int64_t ldy) {
            tile_superblock<F, R, T>(w, wb, x, xb, n, y, ldy);
        }
    };
};

template <typename F>
void rows_superblock(const void * w, size_t wb, const void * x, size_t xb, int64_t n_tok, int64_t n_in, int64_t r0,
                     int64_t r1, float * y, int64_t ldy) {
    tile_walk<superblock_kernel<F>::template of, 1, 1>(w, wb, x, xb, n_tok, n_in, r0, r1, y, ldy);
}

} // namespace

TM_MATMUL_ROWS_ENTRY(matmul_q2_k, rows_superblock<q2_k_format>)
TM_MATMUL_ROWS_ENTRY(matmul_q3_k, rows_superblock<q3_k_format>)
TM_MATMUL_ROWS_ENTRY(matmul_iq4_xs, rows_superblock<iq4_xs_format>)

} // namespace tmill::kernels::TM_KERNELS_LEVEL
