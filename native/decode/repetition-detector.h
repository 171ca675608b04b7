// Repetition detection (docs/http-api.md#repetition-detection): a sequence finishes `repetition` when its
// output ends with the same L-token block repeated min_count times, for some L in [max(min,1), max].
#pragma once

#include <cstdint>

namespace tmill {

struct repetition_params {
    int32_t max_pattern_size = 0;  // 0 = off
    int32_t min_pattern_size = 0;  // 0 means 1
    int32_t min_count = 0;         // ≥ 2 when max_pattern_size > 0
};

// Throws tmill::error invalid_argument with vLLM's messages.
void validate_repetition_params(const repetition_params & p);

// True when the tail of tokens (n_tokens output ids) repeats; false whenever detection is off.
// Cost O(max_pattern_size × max_pattern_size × min_count) at worst, no allocation.
bool has_repetition(const int32_t * tokens, int32_t n_tokens, const repetition_params & p);

} // namespace tmill
