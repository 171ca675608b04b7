#include "quant/quant.h"

#include "base/error.h"
#include "quant/fp16.h"
#include "quant/iq4-nl.h"
#include "quant/iq4-xs.h"
#include "quant/q2-k.h"
#include "quant/q3-k.h"
#include "quant/q4-0.h"
#include "quant/q4-1.h"
#include "quant/q4-k.h"
#include "quant/q5-0.h"
#include "quant/q5-1.h"
#include "quant/q5-k.h"
#include "quant/q6-k.h"
#include "quant/q8-0.h"
#include "quant/q8-1.h"
#include "quant/q8-k.h"

#include <cstring>
#include <string>

namespace tmill::quant {

namespace {
struct geometry {
    int64_t block_size;
    size_t block_bytes;
};

bool lookup(ggml_type type, geometry & g) {
    switch (type) {
        case ggml_type::f32:  g = {1, 4}; return true;
        case ggml_type::f16:  g = {1, 2}; return true;
        case ggml_type::bf16: g = {1, 2}; return true;
        case ggml_type::q8_0: g = {qk8_0, sizeof(block_q8_0)}; return true;
        case ggml_type::q8_1: g = {qk8_1, sizeof(block_q8_1)}; return true;
        case ggml_type::q4_0: g = {qk4_0, sizeof(block_q4_0)}; return true;
        case ggml_type::q4_1: g = {qk4_1, sizeof(block_q4_1)}; return true;
        case ggml_type::q5_0: g = {qk5_0, sizeof(block_q5_0)}; return true;
        case ggml_type::q5_1: g = {qk5_1, sizeof(block_q5_1)}; return true;
        case ggml_type::iq4_nl: g = {qk4_nl, sizeof(block_iq4_nl)}; return true;
        case ggml_type::q2_k: g = {qk_k, sizeof(block_q2_k)}; return true;
        case ggml_type::q3_k: g = {qk_k, sizeof(block_q3_k)}; return true;
        case ggml_type::q4_k: g = {qk_k, sizeof(block_q4_k)}; return true;
        case ggml_type::q5_k: g = {qk_k, sizeof(block_q5_k)}; return true;
        case ggml_type::q6_k: g = {qk_k, sizeof(block_q6_k)}; return true;
        case ggml_type::iq4_xs: g = {qk_k, sizeof(block_iq4_xs)}; return true;
        case ggml_type::q8_k: g = {qk_k, sizeof(block_q8_k)}; return true;
        default: return false;
    }
}

geometry checked(ggml_type type) {
    geometry g{};
    TM_CHECK(lookup(type, g), invalid_argument, "quant: unsupported tensor type " + ggml_type_describe(uint32_t(type)));
    return g;
}

void check_row(ggml_type type, int64_t n) {
    const geometry g = checked(type);
    TM_CHECK(n >= 0 && n % g.block_size == 0, invalid_argument,
             "quant: row length " + std::to_string(n) + " is not a multiple of the block size " +
                 std::to_string(g.block_size) + " of type " + ggml_type_describe(uint32_t(type)));
}
} // namespace

bool type_known(ggml_type type) {
    geometry g{};
    return lookup(type, g);
}

int64_t type_block_size(ggml_type type) { return checked(type).block_size; }
size_t type_block_bytes(ggml_type type) { return checked(type).block_bytes; }

size_t row_bytes(ggml_type type, int64_t n) {
    check_row(type, n);
    const geometry g = checked(type);
    return size_t(n / g.block_size) * g.block_bytes;
}

ggml_type activation_type(ggml_type weight) {
    switch (weight) {
        case ggml_type::f32:
        case ggml_type::f16:
        case ggml_type::bf16: return weight;
        case ggml_type::q8_0:
        case ggml_type::q4_0:
        case ggml_type::q5_0:
        case ggml_type::iq4_nl: return ggml_type::q8_0;
        case ggml_type::q4_1:
        case ggml_type::q5_1: return ggml_type::q8_1;
        case ggml_type::q2_k:
        case ggml_type::q3_k:
        case ggml_type::q4_k:
        case ggml_type::q5_k:
        case ggml_type::q6_k:
        case ggml_type::iq4_xs: return ggml_type::q8_k;
        default: break;
    }
    throw error(error_code::invalid_argument,
                "quant: no matmul for weight type " + ggml_type_describe(uint32_t(weight)));
}

void dequantize_row(ggml_type type, const void * src, float * dst, int64_t n) {
    check_row(type, n);
    switch (type) {
        case ggml_type::f32: std::memcpy(dst, src, size_t(n) * sizeof(float)); return;
        case ggml_type::f16: dequantize_row_f16(src, dst, n); return;
        case ggml_type::bf16: dequantize_row_bf16(src, dst, n); return;
        case ggml_type::q8_0: dequantize_row_q8_0(src, dst, n); return;
        case ggml_type::q8_1: dequantize_row_q8_1(src, dst, n); return;
        case ggml_type::q4_0: dequantize_row_q4_0(src, dst, n); return;
        case ggml_type::q4_1: dequantize_row_q4_1(src, dst, n); return;
        case ggml_type::q5_0: dequantize_row_q5_0(src, dst, n); return;
        case ggml_type::q5_1: dequantize_row_q5_1(src, dst, n); return;
        case ggml_type::iq4_nl: dequantize_row_iq4_nl(src, dst, n); return;
        case ggml_type::q2_k: dequantize_row_q2_k(src, dst, n); return;
        case ggml_type::q3_k: dequantize_row_q3_k(src, dst, n); return;
        case ggml_type::q4_k: dequantize_row_q4_k(src, dst, n); return;
        case ggml_type::q5_k: dequantize_row_q5_k(src, dst, n); return;
        case ggml_type::q6_k: dequantize_row_q6_k(src, dst, n); return;
        case ggml_type::iq4_xs: dequantize_row_iq4_xs(src, dst, n); return;
        case ggml_type::q8_k: dequantize_row_q8_k(src, dst, n); return;
        default: break;
    }
    throw error(error_code::internal, "quant: dequantize_row missing a known type");
}

void quantize_row(ggml_type type, const float * src, void * dst, int64_t n) {
    check_row(type, n);
    switch (type) {
        case ggml_type::f32: std::memcpy(dst, src, size_t(n) * sizeof(float)); return;
        case ggml_type::f16: quantize_row_f16(src, dst, n); return;
        case ggml_type::bf16: quantize_row_bf16(src, dst, n); return;
        case ggml_type::q8_0: quantize_row_q8_0(src, dst, n); return;
        case ggml_type::q8_1: quantize_row_q8_1(src, dst, n); return;
        case ggml_type::q4_0: quantize_row_q4_0(src, dst, n); return;
        case ggml_type::q8_k: quantize_row_q8_k(src, dst, n); return;
        default: break;
    }
    throw error(error_code::invalid_argument,
                "quant: no quantizer for type " + ggml_type_describe(uint32_t(type)));
}

} // namespace tmill::quant
