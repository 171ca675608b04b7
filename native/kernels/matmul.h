// matmul: y (n_tok, n_out) = x (n_tok, n_in) · Wᵀ for W stored as n_out rows of n_in elements in any
// supported ggml type (row-major as in GGUF: ne[0] = n_in), x and y F32, on a thread pool.
#pragma once

#include "base/thread-pool.h"
#include "gguf/ggml-types.h"
#include "kernels/kernels.h"
#include "kernels/weight-layout.h"

#include <cstddef>
#include <cstdint>

namespace tmill::kernels {

// Bytes of scratch matmul needs to hold n_tok activation rows converted for `type`.
size_t matmul_scratch_bytes(ggml_type type, int64_t n_in, int64_t n_tok);

// Bytes of one row of n_in weights of `type` stored in `layout` (16 rows of a repacked layout are 16 times this).
size_t weight_row_bytes(ggml_type type, weight_layout layout, int64_t n_in);

// Whether rows of n_in weights can be stored in `layout`: the layouts of 32-element blocks in pairs (Q8_0, Q4_0 and
// IQ4_NL, Q5_0) take a whole number of block pairs; the others any width of whole blocks.
bool weight_layout_fits(weight_layout layout, int64_t n_in);

// The table entry computing `type` rows stored in `layout`; throws invalid_argument for a type without a matmul
// (or a layout that is not the type's).
matmul_rows_fn matmul_rows_for(const kernel_table & k, ggml_type type, weight_layout layout = weight_layout::gguf);

// NOTE(matmul): batch and thread invariance. Activation rows are converted one by one (a row's
// conversion never looks at another row), and every output element y[t][r] is one dot product over
// n_in computed by a single task in a fixed block order, so y[t][r] does not depend on n_tok, on the
// other rows in the batch, on how rows are split into tasks, or on the thread count.
//
// Preconditions (checked): n_in a multiple of the block size of `type`, n_out, n_tok >= 1,
// scratch_bytes >= matmul_scratch_bytes(type, n_in, n_tok). w: (n_out, row_bytes(type, n_in));
// x: (n_tok, n_in); y: (n_tok, n_out); scratch is overwritten. Allocates nothing.
void matmul(thread_pool & pool, const kernel_table & k, ggml_type type, const void * w, int64_t n_out,
            int64_t n_in, const float * x, int64_t n_tok, float * y, void * scratch, size_t scratch_bytes);

// matmul in two steps, so several weights that read the same x convert its rows once:
// matmul_prepare returns the rows the kernels read — x itself for F32 weights, else x converted into
// scratch for quant::activation_type(type) — and matmul_prepared multiplies them by any weight whose
// activation type and n_in are the same. matmul() is exactly these two calls. Preconditions as matmul's
// (checked); the prepared rows stay valid until scratch is overwritten.
const void * matmul_prepare(thread_pool & pool, const kernel_table & k, ggml_type type, int64_t n_in,
                            const float * x, int64_t n_tok, void * scratch, size_t scratch_bytes);
void matmul_prepared(thread_pool & pool, const kernel_table & k, ggml_type type, const void * w, int64_t n_out,
                     int64_t n_in, const void * xa, int64_t n_tok, float * y);

// One weight of matmul_prepared_many: w (n_out rows of n_in elements of `type`, stored in `layout`) into
// y (n_tok, n_out).
struct matmul_part {
    ggml_type type;
    const void * w;
    int64_t n_out;
    float * y;
    weight_layout layout = weight_layout::gguf;
};

// matmul_prepared for several weights that read the same prepared rows (every part's activation type and
// n_in the same, checked) as ONE pool job: the row tasks of all parts are claimed from one counter, so the
// threads meet once instead of once per weight (decode runs q/k/v and gate/up this way). Each output is
// computed exactly as matmul_prepared computes it. pre: 1 <= n_parts <= k_matmul_max_parts.
constexpr int k_matmul_max_parts = 4;
void matmul_prepared_many(thread_pool & pool, const kernel_table & k, const matmul_part * parts, int n_parts,
                          int64_t n_in, const void * xa, int64_t n_tok);

} // namespace tmill::kernels
