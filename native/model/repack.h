// Weights repacked once at load into the layouts the machine's kernels prefer (kernels/weight-layout.h), 16 rows
// at a time where the kernel table asks for it: Q4_K matmul weights for kernel_table::q4_k_x16 (docs/kernels.md,
// "Q4_K repacked at load"), Q6_K for kernel_table::q6_k_x16 ("Q6_K repacked at load"), Q8_0 for
// kernel_table::q8_0_x16 (the AMX tiles, "The AMX path", and the avx512 lanes), Q4_1, Q4_0, IQ4_NL and Q5_0 for
// kernel_table::q4_1_x16, q4_0_x16 and q5_0_x16 ("Q4_1, Q4_0, IQ4_NL and Q5_0 repacked at load"). The values are the file's, so every result keeps its
// bits.
#pragma once

#include "kernels/kernels.h"
#include "model/weights.h"

#include <cstddef>
#include <cstdint>
#include <memory>

namespace tmill {

// Unmaps the repacked bytes: an anonymous mapping of `length` bytes.
struct unmap_pages {
    size_t length = 0;
    void operator()(uint8_t * p) const;
};

// The repacked bytes (one anonymous mapping, advised for huge pages: NOTE(huge-pages) in repack.cpp) that the
// repacked views point into.
struct repacked_weights {
    std::unique_ptr<uint8_t[], unmap_pages> bytes;
    size_t size = 0;
    size_t replaced = 0;   // the file bytes those replace
};

// Repacks every Q4_K (when k.q4_k_x16 is set), Q6_K (k.q6_k_x16), Q8_0 (k.q8_0_x16; rows of a multiple of 64 weights) ,
// Q4_1 (k.q4_1_x16), Q4_0 and IQ4_NL (k.q4_0_x16) and Q5_0 (k.q5_0_x16; these three in rows of a multiple of 64
// weights) layer
// matmul weight, and an untied output matrix, whose row count is a multiple of 16, pointing its view at the copy,
// and releases the file's pages it replaces from the process (the read-only mapping stays valid; they would be
// read again from the page cache). The copy is the process's
// own memory, which the system cannot page out as it can the file's, so it is made only when all the model's
// weights, repacked, fit in memory_limit bytes (0: the machine's RAM); a model larger than that keeps the file's
// mapping, and the GGUF layout, as does one whose copy cannot be allocated. The token embedding table (and an
// output matrix tied to it) is never repacked: its rows are also looked up one by one.
repacked_weights repack_weights(model_weights & w, const kernels::kernel_table & k, uint64_t memory_limit);

} // namespace tmill
