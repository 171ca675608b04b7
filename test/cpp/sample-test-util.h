// Helpers shared by the sample-* tests: build a sampler on a tiny vocabulary and run one step.
#pragma once

#include "sample/sampler.h"

#include <cmath>
#include <limits>
#include <vector>

namespace tm_test::sample_util {

inline const float ninf = -std::numeric_limits<float>::infinity();

inline tmill::request_shape shape_of(int32_t n_vocab, const std::vector<int32_t> & prompt = {}, int32_t max_output = 64) {
    tmill::request_shape s;
    s.n_vocab = n_vocab;
    s.n_prompt = (int32_t)prompt.size();
    s.prompt = prompt.empty() ? nullptr : prompt.data();
    s.max_output = max_output;
    return s;
}

inline tmill::token_history history_of(const std::vector<int32_t> & prompt, const std::vector<int32_t> & output) {
    tmill::token_history h;
    h.prompt = prompt.data();
    h.n_prompt = (int32_t)prompt.size();
    h.output = output.data();
    h.n_output = (int32_t)output.size();
    return h;
}

// log(p) for each p, so softmax(row) == probs.
inline std::vector<float> logits_of(const std::vector<double> & probs) {
    std::vector<float> out;
    for (double p : probs) out.push_back(p > 0 ? (float)std::log(p) : ninf);
    return out;
}

} // namespace tm_test::sample_util
