// IEEE half (F16) and bfloat16 (BF16) scalar conversions and row converters. Baseline code: no F16C
// assumed (ISA kernels convert with their own intrinsics).
#pragma once

#include <cstdint>

namespace tmill::quant {

float fp16_to_fp32(uint16_t h);
uint16_t fp32_to_fp16(float f);     // round to nearest even; overflow -> inf; NaN stays NaN
float bf16_to_fp32(uint16_t h);
uint16_t fp32_to_bf16(float f);     // round to nearest even (as ggml); NaN stays quiet NaN

// Row converters; n is the element count. src/dst must not overlap.
void dequantize_row_f16(const void * src, float * dst, int64_t n);    // src: (n) uint16 F16
void dequantize_row_bf16(const void * src, float * dst, int64_t n);   // src: (n) uint16 BF16
void quantize_row_f16(const float * src, void * dst, int64_t n);      // dst: (n) uint16 F16
void quantize_row_bf16(const float * src, void * dst, int64_t n);     // dst: (n) uint16 BF16

} // namespace tmill::quant
