// Reference activation quantizer: the quant library's own Q8_0 quantizer, which defines the format.
#include "kernels/ref/ref.h"
#include "quant/q8-0.h"

namespace tmill::kernels::ref {

void quantize_q8_0(const float * x, void * y, int64_t n) { quant::quantize_row_q8_0(x, y, n); }

} // namespace tmill::kernels::ref
