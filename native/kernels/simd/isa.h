// The ISA a family source in kernels/simd/ is compiled for, chosen by the build: TM_KERNELS_AVX2 (binding.gyp's
// tm_kernels_avx2, -mavx2 -mfma -mf16c -mbmi2), TM_KERNELS_AVX512 (tm_kernels_avx512, plus the AVX-512 flags)
// or TM_KERNELS_AVX512_EMULATED (the C++ tests only: the AVX-512 sources on AVX2 hardware through SIMDe).
// It brings in that ISA's traits as `isa`, names the level's namespace TM_KERNELS_LEVEL and declares every
// entry of kernels/entries.h there, so each family source defines its entries as `TM_KERNELS_LEVEL::name`.
#pragma once

#include "kernels/kernels.h"

#if defined(TM_KERNELS_AVX2)
#include <immintrin.h>
#include "kernels/simd/avx2-traits.h"
#include "kernels/simd/avx2-int-dots.h"
#define TM_KERNELS_LEVEL avx2
namespace tmill::kernels { namespace { using isa = avx2_traits; using int_dots = avx2_int_dots; } }
#elif defined(TM_KERNELS_AVX512) || defined(TM_KERNELS_AVX512_EMULATED)
#if defined(TM_KERNELS_AVX512_EMULATED)
#include "kernels/simd/emulated-avx512.h"
#define TM_KERNELS_LEVEL avx512_emulated
#else
#include <immintrin.h>
#define TM_KERNELS_LEVEL avx512
#endif
#include "kernels/simd/avx512-traits.h"
#include "kernels/simd/avx512-int-dots.h"
namespace tmill::kernels { namespace { using isa = avx512_traits; using int_dots = avx512_int_dots; } }
// The AVX-512 levels define the 16-row entries outside the entry list (kernels/kernels.h): matmul_q6_k_x16 (only
// their Q6_K takes the block step, which a row per lane gives), matmul_q4_1_x16, matmul_q4_0_x16, matmul_iq4_nl_x16,
// matmul_q5_0_x16 and matmul_q8_0_x16 (NOTE(nibble-x16)), and the variants of matmul_q4_k_x16 and
// matmul_q6_k_x16 that leave one token's stream to the hardware prefetcher (NOTE(q4-k-x16-prefetch)), which
// kernels_for takes on AMD's cores.
#define TM_KERNELS_AVX512_X16 1
#else
#error "kernels/simd sources are compiled once per ISA: define TM_KERNELS_AVX2, TM_KERNELS_AVX512 or TM_KERNELS_AVX512_EMULATED"
#endif

namespace tmill::kernels::TM_KERNELS_LEVEL {
TM_KERNEL_DECLARE_LEVEL
}
