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

void pack_k4_scales(const uint8_t * sc, const uint8_t * m, uint8_t * q) {
    for (int j = 0; j < 4; ++j) {
        q[j] = uint8_t((sc[j] & 63) | ((sc[j + 4] >> 4) << 6));
        q[j + 4] = uint8_t((m[j] & 63) | ((m[j + 4] >> 4) << 6));
        q[j + 8] = uint8_t((sc[j + 4] & 0x0f) | ((m[j + 4] & 0x0f) << 4));
    }
}

} // namespace tmill::quant
