// evaluate(): the raw logits of every position of one token sequence, outside any engine — the
// diagnostic path parity tests use to compare numerics with llama.cpp (and a perplexity building block).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "model/model.h"

namespace tmill {

// Returns (n_tokens, n_vocab) logits: row i is the prediction after tokens[0..i]. pre: the model has
// weights; 1 <= n_tokens <= its context length; every id in the vocabulary (all checked).
std::vector<float> evaluate(const std::shared_ptr<const model> & m, const std::vector<int32_t> & tokens, int32_t n_threads);

} // namespace tmill
