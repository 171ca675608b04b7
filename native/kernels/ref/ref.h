// Scalar reference kernels (baseline ISA): the yardstick every SIMD variant is tested against. The entries
// themselves are declared in kernels/kernels.h (one per line of kernels/entries.h); this header adds the
// reference's helpers the SIMD levels share.
#pragma once

#include "kernels/kernels.h"

namespace tmill::kernels::ref {

// The SIMD levels' rope: this row loop (n_rot checked as the table entry requires, one row's cos/sin by the
// reference's own recurrence, shared by all heads) around their vector rotation of one head, so every level
// rotates by bitwise the same angles and rejects a bad n_rot the same way (throws invalid_argument).
// rotate_normal(head, n_rot, cos2, sin2) gets each pair's cos/sin twice (entries 2i and 2i+1);
// rotate_neox(head, n_rot / 2, cos, sin) gets them once per pair.
using rope_rotate_fn = void (*)(float * head, int64_t n, const float * cos, const float * sin);
void rope_rows(float * x, int64_t n_rows, int64_t n_head, int64_t head_dim, int64_t n_rot, const int32_t * pos,
               float freq_base, float freq_scale, const float * freq_factors, rope_style style,
               rope_rotate_fn rotate_normal, rope_rotate_fn rotate_neox);

} // namespace tmill::kernels::ref
