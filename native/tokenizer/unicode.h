// Unicode helpers for the tokenizers: UTF-8 decoding/encoding, the general-category class of a code
// point (generated tables, see scripts/gen-unicode-tables.mjs), White_Space, and GPT-2's byte-level
// byte <-> code point mapping.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tmill::tok {

// The order matches the class index in the generated tables.
enum class cpt_class : uint8_t {
    undefined = 0,  // unassigned (Cn) or not a code point
    letter = 1,     // \p{L}
    number = 2,     // \p{N}
    punctuation = 3,  // \p{P}
    symbol = 4,     // \p{S}
    mark = 5,       // \p{M}
    separator = 6,  // \p{Z}
    control = 7,    // \p{C} other than Cn
};

cpt_class classify(uint32_t cpt);
bool is_whitespace(uint32_t cpt);

inline bool is_letter(uint32_t c) { return classify(c) == cpt_class::letter; }
inline bool is_number(uint32_t c) { return classify(c) == cpt_class::number; }

// Length of the UTF-8 sequence that starts with byte `b` (1 for a stray continuation byte).
inline size_t utf8_len(uint8_t b) {
    static const uint8_t lookup[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
    return lookup[b >> 4];
}

// Decodes `s` into code points; each invalid byte becomes U+FFFD (as llama.cpp does).
void decode_utf8(std::string_view s, std::vector<uint32_t> & out);
void append_utf8(uint32_t cpt, std::string & out);

// GPT-2 byte-level mapping: every byte gets a printable code point.
uint32_t byte_to_cpt(uint8_t b);
// Returns -1 when `cpt` is not in the byte-level alphabet.
int cpt_to_byte(uint32_t cpt);

// Generated tables (unicode-tables.cpp).
extern const uint32_t k_category_run_start[];  // (k_category_n_runs)
extern const uint8_t k_category_run_class[];   // (k_category_n_runs)
extern const size_t k_category_n_runs;
extern const uint32_t k_whitespace_ranges[][2];  // (k_whitespace_n_ranges, 2)
extern const size_t k_whitespace_n_ranges;

} // namespace tmill::tok
