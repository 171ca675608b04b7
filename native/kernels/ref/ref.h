// Scalar reference kernels (baseline ISA): the yardstick every SIMD variant is tested against.
// Signatures and contracts as the matching kernel_table entries in kernels/kernels.h.
#pragma once

#include "kernels/kernels.h"

namespace tmill::kernels::ref {

void matmul_rows_f32(const void * w, size_t w_row_bytes, const void * x, size_t x_row_bytes, int64_t n_tok,
                     int64_t n_in, int64_t r0, int64_t r1, float * y, int64_t ldy);
void matmul_rows_f16(const void * w, size_t w_row_bytes, const void * x, size_t x_row_bytes, int64_t n_tok,
                     int64_t n_in, int64_t r0, int64_t r1, float * y, int64_t ldy);
void matmul_rows_bf16(const void * w, size_t w_row_bytes, const void * x, size_t x_row_bytes, int64_t n_tok,
                      int64_t n_in, int64_t r0, int64_t r1, float * y, int64_t ldy);
void matmul_rows_q8_0(const void * w, size_t w_row_bytes, const void * x, size_t x_row_bytes, int64_t n_tok,
                      int64_t n_in, int64_t r0, int64_t r1, float * y, int64_t ldy);
void matmul_rows_q4_0(const void * w, size_t w_row_bytes, const void * x, size_t x_row_bytes, int64_t n_tok,
                      int64_t n_in, int64_t r0, int64_t r1, float * y, int64_t ldy);
void matmul_rows_q4_k(const void * w, size_t w_row_bytes, const void * x, size_t x_row_bytes, int64_t n_tok,
                      int64_t n_in, int64_t r0, int64_t r1, float * y, int64_t ldy);
void matmul_rows_q5_k(const void * w, size_t w_row_bytes, const void * x, size_t x_row_bytes, int64_t n_tok,
                      int64_t n_in, int64_t r0, int64_t r1, float * y, int64_t ldy);
void matmul_rows_q6_k(const void * w, size_t w_row_bytes, const void * x, size_t x_row_bytes, int64_t n_tok,
                      int64_t n_in, int64_t r0, int64_t r1, float * y, int64_t ldy);
void quantize_q8_0(const float * x, void * y, int64_t n);

void rmsnorm(const float * x, const float * w, float * y, int64_t n, float eps);
void softmax(float * x, int64_t n);
void silu_mul(const float * a, const float * b, float * y, int64_t n);
void add(const float * a, const float * b, float * y, int64_t n);
void rope(float * x, int64_t n_rows, int64_t n_head, int64_t head_dim, int64_t n_rot, const int32_t * pos,
          float freq_base, float freq_scale, rope_style style);
// The SIMD levels' rope: this row loop (n_rot checked as the table entry requires, one row's cos/sin by the
// reference's own recurrence, shared by all heads) around their vector rotation of one head, so every level
// rotates by bitwise the same angles and rejects a bad n_rot the same way (throws invalid_argument).
// rotate_normal(head, n_rot, cos2, sin2) gets each pair's cos/sin twice (entries 2i and 2i+1);
// rotate_neox(head, n_rot / 2, cos, sin) gets them once per pair.
using rope_rotate_fn = void (*)(float * head, int64_t n, const float * cos, const float * sin);
void rope_rows(float * x, int64_t n_rows, int64_t n_head, int64_t head_dim, int64_t n_rot, const int32_t * pos,
               float freq_base, float freq_scale, rope_style style, rope_rotate_fn rotate_normal,
               rope_rotate_fn rotate_neox);
float dot_f32(const float * a, const float * b, int64_t n);
void axpy_f32(float a, const float * x, float * y, int64_t n);
float dot_f32_f16(const float * a, const uint16_t * b, int64_t n);
void axpy_f16(float a, const uint16_t * x, float * y, int64_t n);
void attend_f16(const float * q, int64_t head_dim, float scale, int32_t n_ctx, const int32_t * block_table,
                int32_t block_size, const uint16_t * k_base, const uint16_t * v_base, size_t block_stride,
                size_t slot_stride, float * out, float * scratch);
void attend_f16_heads(const float * q, int64_t n_heads, int64_t head_dim, float scale, int32_t n_ctx,
                      const int32_t * block_table, int32_t block_size, const uint16_t * k_base, const uint16_t * v_base,
                      size_t block_stride, size_t slot_stride, float * out, float * scratch);

} // namespace tmill::kernels::ref
