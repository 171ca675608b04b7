#include "quant/q8-1.h"

#include "base/error.h"
#include "quant/fp16.h"
#include "quant/q8-0.h"


namespace tmill::quant {

void quantize_row_q8_1(const float * src, void * dst, int64_t n) {
    TM_CHECK(n % qk8_1 == 0, invalid_argument, "quantize_row_q8_1: n must be a multiple of 32");
    block_q8_1 * b = static_cast<block_q8_1 *>(dst);
    for (int64_t i = 0; i < n / qk8_1; ++i) {
        const float d = quantize_block_q8(src + i * qk8_1, b[i].qs);
        int sum = 0;
        for (int j = 0; j < qk8_1; ++j) sum += b[i].qs[j];
        b[i].d = fp32_to_fp16(d);
        b[i].s = fp32_to_fp16(d * float(sum));
    }
}

void dequantize_row_q8_1(const void * src, float * dst, int64_t n) {
    TM_CHECK(n % qk8_1 == 0, invalid_argument, "dequantize_row_q8_1: n must be a multiple of 32");
    const block_q8_1 * b = static_cast<const block_q8_1 *>(src);
    for (int64_t i = 0; i < n / qk8_1; ++i) {
        const float d = fp16_to_fp32(b[i].d);
        for (int j = 0; j < qk8_1; ++j) dst[i * qk8_1 + j] = d * float(b[i].qs[j]);
    }
}

} // namespace tmill::quant
