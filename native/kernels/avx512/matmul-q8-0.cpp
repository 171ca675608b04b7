// AVX-512 VNNI matmul rows for Q8_0 and Q4_0 weights against Q8_0 activations.
//
// NOTE(avx512-q8): one 32-block per 256-bit register (AVX-512VL VNNI on ymm: the two-blocks-per-zmm
// form measured slower, its per-block scale assembly costing more than the wider dot saves), one
// 8-lane float accumulator per (row, token) pair; block b adds (d_w * d_x) times the dpbusd int32
// lane sums, acc = fma(d_w * d_x, lanes, acc), reduced by hsum8 at the end. The row x token tile only
// shares loaded registers: each pair sees the same float operations in the same block order in every
// tile shape (batch invariance). The int32 lanes are exact, so how a tile forms them is free: the
// one-token (decode) tile uses |w| and x signed by w; the multi-token tiles use x + 128 (unsigned)
// against signed w plus a per-(row, block) -128 * sum(w) correction, which saves a sign per pair —
// both give the same lanes (|x| <= 127). Q4_0 uses the unsigned nibble n and subtracts 8 * sum(x).
#include "kernels/avx512/avx512.h"
#include "kernels/hsum.h"
#include "kernels/tiling.h"
#include "quant/q4-0.h"
#include "quant/q8-0.h"

#include <immintrin.h>

// GCC 12's avx512fintrin.h builds _mm512_reduce_*/_mm512_insert* on self-initialised "undefined"
// vectors, which -Wuninitialized reports as uninitialised; the lanes are never read.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace tmill::kernels::avx512 {

namespace {

using quant::block_q4_0;
using quant::block_q8_0;

// F16 -> F32 of one scale (vcvtph2ps on a 16-bit value).
float f16(uint16_t h) { return _cvtsh_ss(h); }

// One token (decode): |w| x (x signed by w), the scale product broadcast from a register. Memory-bound,
// so the fewest instructions per weight byte win.
template <int R>
void tile_q8_0_one(const char * w, size_t wb, const char * x, int64_t n_in, float * y) {
    const int64_t nb = n_in / quant::qk8_0;
    __m256 acc[R];
    for (int r = 0; r < R; ++r) acc[r] = _mm256_setzero_ps();
    const block_q8_0 * xr = reinterpret_cast<const block_q8_0 *>(x);
    for (int64_t b = 0; b < nb; ++b) {
        const __m256i xq = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(xr[b].qs));
        const float dx = f16(xr[b].d);
        for (int r = 0; r < R; ++r) {
            const block_q8_0 * wblk = reinterpret_cast<const block_q8_0 *>(w + size_t(r) * wb) + b;
            const __m256i wq = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(wblk->qs));
            const __m256i p = _mm256_dpbusd_epi32(_mm256_setzero_si256(), _mm256_sign_epi8(wq, wq), _mm256_sign_epi8(xq, wq));
            acc[r] = _mm256_fmadd_ps(_mm256_set1_ps(f16(wblk->d) * dx), _mm256_cvtepi32_ps(p), acc[r]);
        }
    }
    for (int r = 0; r < R; ++r) y[r] = hsum8(acc[r]);
}

// Several tokens (prompts): x + 128 as unsigned bytes against signed w, the -128 * sum(w) correction
// computed once per (row, block) and used as the dpbusd accumulator; the R x T scale products are
// computed 4 at a time and stored, so each FMA broadcasts its scale from memory ({1to8}, load unit)
// instead of spending shuffles on it. Per (row, token, block): one dpbusd, one convert, one FMA.
template <int R, int T>
void tile_q8_0_many(const char * w, size_t wb, const char * x, size_t xb, int64_t n_in, float * y, int64_t ldy) {
    static_assert(T >= 2 && T <= 4, "a tile has 2..4 tokens (one xmm of scales)");
    const int64_t nb = n_in / quant::qk8_0;
    const __m256i bias = _mm256_set1_epi8(char(0x80));
    __m256 acc[R][T];
    for (int r = 0; r < R; ++r)
        for (int t = 0; t < T; ++t) acc[r][t] = _mm256_setzero_ps();
    alignas(16) float s[R][4];   // (R, 4) this block's d_w * d_x per (row, token); lanes >= T unused
    for (int64_t b = 0; b < nb; ++b) {
        // Activations as unsigned bytes x + 128 (|x| <= 127, so 1..255), and their scales in one xmm.
        __m256i xu[T];
        uint64_t dx_bits = 0;
        for (int t = 0; t < T; ++t) {
            const block_q8_0 * xblk = reinterpret_cast<const block_q8_0 *>(x + size_t(t) * xb) + b;
            xu[t] = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(xblk->qs)), bias);
            dx_bits |= uint64_t(xblk->d) << (16 * t);
        }
        const __m128 dx = _mm_cvtph_ps(_mm_cvtsi64_si128(int64_t(dx_bits)));
        for (int r = 0; r < R; ++r) {
            const uint16_t dw = reinterpret_cast<const block_q8_0 *>(w + size_t(r) * wb)[b].d;
            _mm_store_ps(s[r], _mm_mul_ps(_mm_set1_ps(f16(dw)), dx));
        }
        const float * sp = &s[0][0];
        __asm__("" : "+r"(sp));   // opaque: the FMAs below must read the stored scales from memory
        for (int r = 0; r < R; ++r) {
            const block_q8_0 * wblk = reinterpret_cast<const block_q8_0 *>(w + size_t(r) * wb) + b;
            const __m256i wq = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(wblk->qs));
            // -128 * (sum of each lane's 4 weights): dpbusd(x + 128, w) + this = the lanes of x * w.
            const __m256i corr = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_dpbusd_epi32(_mm256_setzero_si256(), bias, wq));
            for (int t = 0; t < T; ++t) {
                const __m256i p = _mm256_dpbusd_epi32(corr, xu[t], wq);
                acc[r][t] = _mm256_fmadd_ps(_mm256_set1_ps(sp[4 * r + t]), _mm256_cvtepi32_ps(p), acc[r][t]);
            }
        }
    }
    for (int r = 0; r < R; ++r)
        for (int t = 0; t < T; ++t) y[t * ldy + r] = hsum8(acc[r][t]);
}

template <int R, int T>
void tile_q4_0(const char * w, size_t wb, const char * x, size_t xb, int64_t n_in, float * y, int64_t ldy) {
    const int64_t nb = n_in / quant::qk4_0;
    __m256 acc[R][T];
    for (int r = 0; r < R; ++r)
        for (int t = 0; t < T; ++t) acc[r][t] = _mm256_setzero_ps();
    const __m256i eights = _mm256_set1_epi8(8);
    const __m256i low4 = _mm256_set1_epi8(0x0f);
    for (int64_t b = 0; b < nb; ++b) {
        __m256i xq[T], x8[T];
        float dx[T];
        for (int t = 0; t < T; ++t) {
            const block_q8_0 * xblk = reinterpret_cast<const block_q8_0 *>(x + size_t(t) * xb) + b;
            xq[t] = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(xblk->qs));
            x8[t] = _mm256_dpbusd_epi32(_mm256_setzero_si256(), eights, xq[t]);
            dx[t] = _cvtsh_ss(xblk->d);
        }
        for (int r = 0; r < R; ++r) {
            const block_q4_0 * wblk = reinterpret_cast<const block_q4_0 *>(w + size_t(r) * wb) + b;
            const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i *>(wblk->qs));
            const __m256i wn = _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(packed, 4), packed), low4);
            const float dw = _cvtsh_ss(wblk->d);
            for (int t = 0; t < T; ++t) {
                const __m256i p = _mm256_sub_epi32(_mm256_dpbusd_epi32(_mm256_setzero_si256(), wn, xq[t]), x8[t]);
                acc[r][t] = _mm256_fmadd_ps(_mm256_set1_ps(dw * dx[t]), _mm256_cvtepi32_ps(p), acc[r][t]);
            }
        }
    }
    for (int r = 0; r < R; ++r)
        for (int t = 0; t < T; ++t) y[t * ldy + r] = hsum8(acc[r][t]);
}

template <int R, int T>
struct q8_0_kernel {
    static void fn(const char * w, size_t wb, const char * x, size_t xb, int64_t n, float * y, int64_t ldy) {
        if constexpr (T == 1) tile_q8_0_one<R>(w, wb, x, n, y);
        else tile_q8_0_many<R, T>(w, wb, x, xb, n, y, ldy);
    }
};
template <int R, int T>
struct q4_0_kernel {
    static void fn(const char * w, size_t wb, const char * x, size_t xb, int64_t n, float * y, int64_t ldy) {
        tile_q4_0<R, T>(w, wb, x, xb, n, y, ldy);
    }
};

} // namespace

void matmul_rows_q8_0(const void * w, size_t wb, const void * x, size_t xb, int64_t n_tok, int64_t n_in,
                      int64_t r0, int64_t r1, float * y, int64_t ldy) {
    tile_walk<q8_0_kernel, 8, 5>(w, wb, x, xb, n_tok, n_in, r0, r1, y, ldy);
}

void matmul_rows_q4_0(const void * w, size_t wb, const void * x, size_t xb, int64_t n_tok, int64_t n_in,
                      int64_t r0, int64_t r1, float * y, int64_t ldy) {
    tile_walk<q4_0_kernel, 8, 4>(w, wb, x, xb, n_tok, n_in, r0, r1, y, ldy);
}

} // namespace tmill::kernels::avx512
