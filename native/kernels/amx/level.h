// Which AMX level an AMX kernel source is compiled as: TM_KERNELS_AMX (the instructions, -mamx-tile -mamx-int8
// and the AVX-512 flags; namespace amx, its small batches on the avx512 level) or TM_KERNELS_AMX_EMULATED (the
// C++ tests: the scalar tile emulator of kernels/amx/tile-ops.h and SIMDe's AVX-512; namespace amx_emulated,
// its small batches on avx512_emulated). Included first by each kernels/amx/*.cpp.
#pragma once

#if defined(TM_KERNELS_AMX_EMULATED)
#include "kernels/simd/emulated-avx512.h"
#define TM_AMX_LEVEL amx_emulated
#define TM_AMX_SIMD_LEVEL avx512_emulated
#elif defined(TM_KERNELS_AMX)
#include <immintrin.h>
#define TM_AMX_LEVEL amx
#define TM_AMX_SIMD_LEVEL avx512
#else
#error "kernels/amx sources are compiled as TM_KERNELS_AMX (the instructions) or TM_KERNELS_AMX_EMULATED (the tests)"
#endif
