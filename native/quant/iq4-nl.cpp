#include "quant/iq4-nl.h"

#include "base/error.h"
#include "quant/fp16.h"

namespace tmill::quant {

void dequantize_row_iq4_nl(const void * src, float * dst, int64_t n) {
    TM_CHECK(n % qk4_nl == 0, invalid_argument, "dequantize_row_iq4_nl: n must be a multiple of 32");
    const block_iq4_nl * b = static_cast<const block_iq4_nl *>(src);
    for (int64_t i = 0; i < n / qk4_nl; ++i) {
        const float d = fp16_to_fp32(b[i].d);
        float * y = dst + i * qk4_nl;
        for (int j = 0; j < qk4_nl / 2; ++j) {
            y[j] = d * float(k_iq4nl_values[b[i].qs[j] & 0x0f]);
            y[j + qk4_nl / 2] = d * float(k_iq4nl_values[b[i].qs[j] >> 4]);
        }
    }
}

} // namespace tmill::quant
