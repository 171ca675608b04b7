// How a weight's rows are stored: as in the GGUF file, or, for Q4_K on a table with kernel_table::q4_k_x16,
// repacked 16 rows at a time at load (quant/q4-k-x16.h, model/repack.h; the row count a multiple of 16).
#pragma once

#include <cstdint>

namespace tmill::kernels {

enum class weight_layout : uint8_t { gguf, q4_k_x16 };

} // namespace tmill::kernels
