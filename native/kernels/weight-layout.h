// How a weight's rows are stored: as in the GGUF file, or repacked 16 rows at a time at load (model/repack.h; the
// row count a multiple of 16): Q4_K on a table with kernel_table::q4_k_x16 (quant/q4-k-x16.h), Q6_K on one with
// kernel_table::q6_k_x16 (quant/q6-k-x16.h), Q8_0 on one with kernel_table::q8_0_x16 (quant/q8-0-x16.h; the row
// width a multiple of 64), Q4_1 on one with kernel_table::q4_1_x16 (quant/q4-1-x16.h), Q4_0 and IQ4_NL (the same block
// shape) on one with kernel_table::q4_0_x16 (quant/q4-0-x16.h; the row width a multiple of 64), Q5_0 on one with
// kernel_table::q5_0_x16 (quant/q5-0-x16.h; likewise).
#pragma once

#include <cstdint>

namespace tmill::kernels {

enum class weight_layout : uint8_t { gguf, q4_k_x16, q6_k_x16, q8_0_x16, q4_1_x16, q4_0_x16, q5_0_x16 };

} // namespace tmill::kernels
