// The AMX level's entries (docs/kernels.md, "The AMX path"): kernels/amx/matmul-q8-0.cpp for Q8_0 (in the GGUF
// rows or repacked at load), Q4_0, IQ4_NL, Q4_1 and Q5_1 weights, kernels/amx/matmul-q4-k.cpp for Q4_K repacked at
// load, kernels/amx/matmul-q6-k.cpp for Q6_K; kernels/amx/table.cpp fills them in. The level is the AVX-512 table
// with these entries replaced; kernels_for(isa_level::avx512_amx) builds it, and only where cpu_features_get().amx
// says the CPU has AMX-TILE + AMX-INT8 and the OS granted this process the tile data state. Each entry computes
// the bits of the avx512 level's kernel for its type and of that kernel's scalar reference: the block step
// (kernels/block-step/step.h, block_step_ref) for the 32-block types (an exact int32 dot per 32-block, one fma per
// block, and one more for a minimum) and for Q6_K (one exact sum and one fma per super-block), for Q4_K the
// reference's super-block steps (kernels/ref/matmul-k.cpp).
#pragma once

#include "kernels/amx/tile-config.h"
#include "kernels/kernels.h"

namespace tmill::kernels {

// One tile product covers up to 16 weight rows x 16 tokens x one 32-byte block (a 32-block, or a Q4_K sub-block).
constexpr int64_t k_amx_tile_tokens = 16;
constexpr int64_t k_amx_tile_rows = 16;
// Batches of fewer tokens take the AVX-512 kernels of the same numerics (the same bits), except on Q8_0
// repacked at load: the weights' conversion for the tiles would cost them more than the tiles save
// (docs/kernels.md, "The AMX path").
constexpr int64_t k_amx_min_tokens = 16;

// The real instructions (tm_kernels_amx, built with -mamx-tile -mamx-int8).
namespace amx {
matmul_rows_kernel matmul_q8_0;
matmul_rows_kernel matmul_q4_0;
matmul_rows_kernel matmul_iq4_nl;
matmul_rows_kernel matmul_q4_1;       // against Q8_1, with the minimum (block_step_min)
matmul_rows_kernel matmul_q5_1;
matmul_rows_kernel matmul_q8_0_x16;   // Q8_0 repacked at load (quant/q8-0-x16.h), every token count on tiles
// Q4_1, Q4_0 and IQ4_NL repacked at load (quant/q4-1-x16.h, quant/q4-0-x16.h), 16 tokens and more on tiles, fewer on the
// avx512 level's lanes
matmul_rows_kernel matmul_q4_1_x16;
matmul_rows_kernel matmul_q4_0_x16;
matmul_rows_kernel matmul_iq4_nl_x16;
matmul_rows_kernel matmul_q4_k_x16;   // Q4_K repacked at load (quant/q4-k-x16.h), 16 tokens and more on tiles
matmul_rows_kernel matmul_q6_k;       // Q6_K (the GGUF rows), 16 tokens and more on tiles
// Sets the entries the AMX level replaces; the rest of t stays as filled before (the AVX-512 level's).
void fill(kernel_table & t);
} // namespace amx

// The same source against the scalar tile emulator, on SIMDe's AVX-512 (the C++ tests' build only,
// tm_kernels_amx_emulated).
namespace amx_emulated {
matmul_rows_kernel matmul_q8_0;
matmul_rows_kernel matmul_q4_0;
matmul_rows_kernel matmul_iq4_nl;
matmul_rows_kernel matmul_q4_1;
matmul_rows_kernel matmul_q5_1;
matmul_rows_kernel matmul_q8_0_x16;
matmul_rows_kernel matmul_q4_1_x16;
matmul_rows_kernel matmul_q4_0_x16;
matmul_rows_kernel matmul_iq4_nl_x16;
matmul_rows_kernel matmul_q4_k_x16;
matmul_rows_kernel matmul_q6_k;
void fill(kernel_table & t);
// The emulator's state on the calling thread, for the tests: the tile configuration in force (STTILECFG's
// answer; a call must leave it as it found it), a configuration loaded as other code on the thread would load
// one (palette 0: none, as TILERELEASE leaves it), and how many TDPBSSDs ran (every call takes the tiles).
tile_config tile_config_in_force();
void load_tile_config(const tile_config & c);
uint64_t tile_products();
} // namespace amx_emulated

} // namespace tmill::kernels
