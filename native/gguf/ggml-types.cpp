// Block geometry of every ggml tensor type id that can appear in a GGUF file.
// NOTE(ggml-types): type_size is the byte size of one block of block_size elements; a tensor row of
// ne[0] elements therefore takes ne[0] / block_size * type_size bytes and ne[0] must divide evenly.
// The values follow ggml's block structs (e.g. Q4_K = 2 halves + 12 scale bytes + 128 nibble bytes).
#include "gguf/ggml-types.h"

#include <string>

namespace tmill {

namespace {

struct type_entry {
    uint32_t id;
    ggml_type_traits traits;
};

// Ids missing here (4, 5, 31–33, 36–38) were removed from ggml or never assigned.
constexpr type_entry k_types[] = {
    {0,  {"f32",     1,   4}},
    {1,  {"f16",     1,   2}},
    {2,  {"q4_0",    32,  18}},   // half d + 16 nibble bytes
    {3,  {"q4_1",    32,  20}},   // half d, m + 16
    {6,  {"q5_0",    32,  22}},   // half d + 4 high bits + 16
    {7,  {"q5_1",    32,  24}},   // half d, m + 4 + 16
    {8,  {"q8_0",    32,  34}},   // half d + 32 int8
    {9,  {"q8_1",    32,  36}},   // half d, s + 32 int8
    {10, {"q2_K",    256, 84}},   // 16 scales + 64 quants + half d, dmin
    {11, {"q3_K",    256, 110}},  // 32 hmask + 64 quants + 12 scales + half d
    {12, {"q4_K",    256, 144}},  // half d, dmin + 12 scales + 128 nibbles
    {13, {"q5_K",    256, 176}},  // half d, dmin + 12 scales + 32 high bits + 128 nibbles
    {14, {"q6_K",    256, 210}},  // 128 low nibbles + 64 high 2-bits + 16 int8 scales + half d
    {15, {"q8_K",    256, 292}},  // float d + 256 int8 + 16 int16 block sums
    {16, {"iq2_xxs", 256, 66}},
    {17, {"iq2_xs",  256, 74}},
    {18, {"iq3_xxs", 256, 98}},
    {19, {"iq1_s",   256, 50}},
    {20, {"iq4_nl",  32,  18}},
    {21, {"iq3_s",   256, 110}},
    {22, {"iq2_s",   256, 82}},
    {23, {"iq4_xs",  256, 136}},
    {24, {"i8",      1,   1}},
    {25, {"i16",     1,   2}},
    {26, {"i32",     1,   4}},
    {27, {"i64",     1,   8}},
    {28, {"f64",     1,   8}},
    {29, {"iq1_m",   256, 56}},
    {30, {"bf16",    1,   2}},
    {34, {"tq1_0",   256, 54}},
    {35, {"tq2_0",   256, 66}},
    {39, {"mxfp4",   32,  17}},   // e8m0 scale + 16 nibble bytes
};

} // namespace

ggml_type_traits ggml_type_info(uint32_t type_id) {
    for (const auto & e : k_types) {
        if (e.id == type_id) return e.traits;
    }
    return {nullptr, 0, 0};
}

std::string ggml_type_describe(uint32_t type_id) {
    const char * name = ggml_type_info(type_id).name;
    return name ? std::string(name) : "unknown type id " + std::to_string(type_id);
}

bool ggml_type_supported(ggml_type type) {
    switch (type) {
        case ggml_type::f32:
        case ggml_type::f16:
        case ggml_type::bf16:
        case ggml_type::q4_0:
        case ggml_type::q4_1:
        case ggml_type::q5_0:
        case ggml_type::q5_1:
        case ggml_type::q8_0:
        case ggml_type::q2_k:
        case ggml_type::q3_k:
        case ggml_type::q4_k:
        case ggml_type::q5_k:
        case ggml_type::q6_k:
        case ggml_type::iq4_nl:
        case ggml_type::iq4_xs:
            return true;
        default:
            return false;
    }
}

std::string ggml_supported_type_names() {
    std::string out;
    for (const auto & e : k_types) {
        if (!ggml_type_supported(ggml_type(e.id))) continue;
        out += (out.empty() ? "" : ", ") + std::string(e.traits.name);
    }
    return out;
}

} // namespace tmill
