#include "decode/repetition-detector.h"

#include "base/error.h"

namespace tmill {

void validate_repetition_params(const repetition_params & p) {
    TM_CHECK(p.max_pattern_size >= 0 && p.min_pattern_size >= 0 && p.min_pattern_size <= p.max_pattern_size,
             invalid_argument,
             "max_pattern_size, min_pattern_size must be >=0, with min_pattern_size <= max_pattern_size. "
             "Set both to 0 to disable repetitive pattern detection.");
    TM_CHECK(!(p.max_pattern_size > 0 && p.min_count < 2), invalid_argument,
             "min_count must be >= 2 to detect repetitive patterns in engine output. If you do not wish to detect "
             "repetitive patterns, set max_pattern_size to 0.");
}

// NOTE(repetition): tail-anchored only — the last L tokens must equal each of the min_count − 1
// blocks of L tokens before them. Pattern lengths are tried from short to long and the scan stops
// at the first length whose L × min_count exceeds the output (longer ones cannot fit either).
bool has_repetition(const int32_t * tokens, int32_t n_tokens, const repetition_params & p) {
    const int32_t min_size = p.min_pattern_size <= 0 ? 1 : p.min_pattern_size;
    if (p.max_pattern_size <= 0 || p.min_count < 2 || min_size > p.max_pattern_size) return false;
    for (int32_t len = min_size; len <= p.max_pattern_size; ++len) {
        if ((int64_t)len * p.min_count > n_tokens) return false;
        bool repeats = true;
        for (int32_t i = 1; i <= len && repeats; ++i) {
            const int32_t target = tokens[n_tokens - i];
            for (int32_t m = 1; m < p.min_count; ++m) {
                if (tokens[n_tokens - (len * m + i)] != target) {
                    repeats = false;
                    break;
                }
            }
        }
        if (repeats) return true;
    }
    return false;
}

} // namespace tmill
