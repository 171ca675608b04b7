// Reference activation quantizers: the quant library's own quantizers, which define the formats.
#include "kernels/ref/ref.h"
#include "quant/fp16.h"
#include "quant/q8-0.h"
#include "quant/q8-1.h"
#include "quant/q8-k.h"

namespace tmill::kernels::ref {

void quantize_q8_0(const float * x, void * y, int64_t n) { quant::quantize_row_q8_0(x, y, n); }
void quantize_q8_1(const float * x, void * y, int64_t n) { quant::quantize_row_q8_1(x, y, n); }
void quantize_q8_k(const float * x, void * y, int64_t n) { quant::quantize_row_q8_k(x, y, n); }
void quantize_f16(const float * x, void * y, int64_t n) { quant::quantize_row_f16(x, y, n); }

} // namespace tmill::kernels::ref
