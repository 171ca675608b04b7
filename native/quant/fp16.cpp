#include "quant/fp16.h"

#include <cmath>
#include <cstring>

namespace tmill::quant {

namespace {
uint32_t float_bits(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
float bits_float(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }
} // namespace

float fp16_to_fp32(uint16_t h) {
    const uint32_t sign = uint32_t(h & 0x8000) << 16;
    const uint32_t exp = (h >> 10) & 0x1f;
    const uint32_t mant = h & 0x3ff;
    if (exp == 0) {
        // Zero or subnormal: mant * 2^-24 is exact in float.
        const float v = float(mant) * (1.0f / 16777216.0f);
        return sign ? -v : v;
    }
    if (exp == 31) return bits_float(sign | 0x7f800000u | (mant << 13));
    return bits_float(sign | ((exp + 112) << 23) | (mant << 13));
}

uint16_t fp32_to_fp16(float f) {
    uint32_t x = float_bits(f);
    const uint16_t sign = uint16_t((x >> 16) & 0x8000);
    x &= 0x7fffffffu;
    if (x >= 0x7f800000u) return uint16_t(sign | (x > 0x7f800000u ? 0x7e00 : 0x7c00));
    if (x >= 0x477ff000u) return uint16_t(sign | 0x7c00);  // >= 65520 rounds to inf
    if (x < 0x38800000u) {
        // Below the smallest normal half (2^-14): the half is round(|f| * 2^24) ulps; the scaling is
        // exact and nearbyint rounds to nearest even. 1024 ulps encodes the smallest normal.
        const float ulps = std::nearbyint(bits_float(x) * 16777216.0f);
        return uint16_t(sign | uint16_t(ulps));
    }
    uint32_t h = ((((x >> 23) - 127 + 15) & 0x1f) << 10) | ((x & 0x7fffffu) >> 13);
    const uint32_t rest = x & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // a carry into the exponent is correct
    return uint16_t(sign | h);
}

float bf16_to_fp32(uint16_t h) { return bits_float(uint32_t(h) << 16); }

uint16_t fp32_to_bf16(float f) {
    const uint32_t x = float_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t((x >> 16) | 64);  // quiet the NaN
    return uint16_t((x + (0x7fffu + ((x >> 16) & 1u))) >> 16);
}

void dequantize_row_f16(const void * src, float * dst, int64_t n) {
    const uint16_t * s = static_cast<const uint16_t *>(src);
    for (int64_t i = 0; i < n; ++i) dst[i] = fp16_to_fp32(s[i]);
}

void dequantize_row_bf16(const void * src, float * dst, int64_t n) {
    const uint16_t * s = static_cast<const uint16_t *>(src);
    for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_fp32(s[i]);
}

void quantize_row_f16(const float * src, void * dst, int64_t n) {
    uint16_t * d = static_cast<uint16_t *>(dst);
    for (int64_t i = 0; i < n; ++i) d[i] = fp32_to_fp16(src[i]);
}

void quantize_row_bf16(const float * src, void * dst, int64_t n) {
    uint16_t * d = static_cast<uint16_t *>(dst);
    for (int64_t i = 0; i < n; ++i) d[i] = fp32_to_bf16(src[i]);
}

} // namespace tmill::quant
