// Row element loaders for the float family sources: vec(p, i) = the ISA's W elements of row p from element i
// as floats, vec(p, i, m) the same for the lanes of mask m (others zero), one(p, i) a single element.
// Internal linkage, as tiling.h.
#pragma once

#include <cstdint>

namespace tmill::kernels {
namespace {

template <typename V>
struct load_f32 {
    static const float * at(const void * p, int64_t i) { return static_cast<const float *>(p) + i; }
    static typename V::f32 vec(const void * p, int64_t i) { return V::load(at(p, i)); }
    static typename V::f32 vec(const void * p, int64_t i, typename V::mask m) { return V::load(at(p, i), m); }
    static float one(const void * p, int64_t i) { return *at(p, i); }
};

template <typename V>
struct load_f16 {
    static const uint16_t * at(const void * p, int64_t i) { return static_cast<const uint16_t *>(p) + i; }
    static typename V::f32 vec(const void * p, int64_t i) { return V::load_f16(at(p, i)); }
    static typename V::f32 vec(const void * p, int64_t i, typename V::mask m) { return V::load_f16(at(p, i), m); }
    static float one(const void * p, int64_t i) { return _cvtsh_ss(*at(p, i)); }
};

template <typename V>
struct load_bf16 {
    static const uint16_t * at(const void * p, int64_t i) { return static_cast<const uint16_t *>(p) + i; }
    static typename V::f32 vec(const void * p, int64_t i) { return V::load_bf16(at(p, i)); }
    static typename V::f32 vec(const void * p, int64_t i, typename V::mask m) { return V::load_bf16(at(p, i), m); }
    static float one(const void * p, int64_t i) {
        const uint32_t bits = uint32_t(*at(p, i)) << 16;
        return _mm_cvtss_f32(_mm_castsi128_ps(_mm_cvtsi32_si128(int(bits))));
    }
};

} // namespace
} // namespace tmill::kernels
