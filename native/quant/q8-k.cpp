#include "quant/q8-k.h"

#include "base/error.h"

#include <cmath>
#include <cstring>

namespace tmill::quant {

namespace {
// Round to nearest, ties to even, via the 1.5 * 2^23 trick (ggml's nearest_int); |v| < 2^22.
int nearest_int(float v) {
    const float shifted = v + 12582912.0f;
    int32_t i;
    std::memcpy(&i, &shifted, 4);
    return (i & 0x007fffff) - 0x00400000;
}
} // namespace

void quantize_row_q8_k(const float * src, void * dst, int64_t n) {
    TM_CHECK(n % qk_k == 0, invalid_argument, "quantize_row_q8_k: n must be a multiple of 256");
    block_q8_k * b = static_cast<block_q8_k *>(dst);
    for (int64_t i = 0; i < n / qk_k; ++i) {
        const float * x = src + i * qk_k;
        float amax = 0.0f, max = 0.0f;
        for (int j = 0; j < qk_k; ++j) {
            const float ax = std::fabs(x[j]);
            if (ax > amax) { amax = ax; max = x[j]; }
        }
        if (amax == 0.0f) {
            std::memset(&b[i], 0, sizeof(block_q8_k));
            continue;
        }
        const float iscale = -127.0f / max;
        for (int j = 0; j < qk_k; ++j) {
            const int v = nearest_int(iscale * x[j]);
            b[i].qs[j] = int8_t(v < 127 ? v : 127);
        }
        for (int g = 0; g < qk_k / 16; ++g) {
            int sum = 0;
            for (int l = 0; l < 16; ++l) sum += b[i].qs[16 * g + l];
            b[i].bsums[g] = int16_t(sum);
        }
        b[i].d = 1.0f / iscale;
    }
}

void dequantize_row_q8_k(const void * src, float * dst, int64_t n) {
    TM_CHECK(n % qk_k == 0, invalid_argument, "dequantize_row_q8_k: n must be a multiple of 256");
    const block_q8_k * b = static_cast<const block_q8_k *>(src);
    for (int64_t i = 0; i < n / qk_k; ++i)
        for (int j = 0; j < qk_k; ++j) dst[i * qk_k + j] = b[i].d * float(b[i].qs[j]);
}

} // namespace tmill::quant
