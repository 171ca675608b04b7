#include "quant/k-common.h"

namespace tmill::quant {

void unpack_k4_scales(const uint8_t * q, uint8_t * sc, uint8_t * m) {
    for (int j = 0; j < 4; ++j) {
        sc[j] = q[j] & 63;
        m[j] = q[j + 4] & 63;
    }
    for (int j = 4; j < 8; ++j) {
        sc[j] = uint8_t((q[j + 4] & 0x0f) | ((q[j - 4] >> 6) << 4));
        m[j] = uint8_t((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
    }
}

} // namespace tmill::quant
