// ggml tensor type ids as stored in GGUF, with their block geometry. Data only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace tmill {

enum class ggml_type : uint32_t {
    f32 = 0, f16 = 1, q4_0 = 2, q4_1 = 3, q5_0 = 6, q5_1 = 7, q8_0 = 8, q8_1 = 9,
    q2_k = 10, q3_k = 11, q4_k = 12, q5_k = 13, q6_k = 14, q8_k = 15,
    iq2_xxs = 16, iq2_xs = 17, iq3_xxs = 18, iq1_s = 19, iq4_nl = 20, iq3_s = 21, iq2_s = 22,
    iq4_xs = 23, i8 = 24, i16 = 25, i32 = 26, i64 = 27, f64 = 28, iq1_m = 29, bf16 = 30,
    tq1_0 = 34, tq2_0 = 35, mxfp4 = 39,
};

struct ggml_type_traits {
    const char * name;      // nullptr for ids that are not a known type
    uint32_t block_size;    // elements per block
    uint32_t type_size;     // bytes per block
};

// Traits for a raw type id from a file; name == nullptr when the id is unknown.
ggml_type_traits ggml_type_info(uint32_t type_id);

// A type for messages: its name ("q4_1"), or "unknown type id N".
std::string ggml_type_describe(uint32_t type_id);

// True for the weight types tokenmill's kernels compute with (F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1,
// Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS).
bool ggml_type_supported(ggml_type type);
// Those types' names, comma-separated, for error messages ("f32, f16, q4_0, ...").
std::string ggml_supported_type_names();

} // namespace tmill
