// Logprob helpers over one distribution row (logits in, log-softmax values out), used for sampled
// tokens and for prompt logprobs. -inf stays -inf here; the formatter writes it as -9999.0.
#pragma once

#include "sample/logits-processor.h"

#include <cstdint>

namespace tmill {

struct token_logprob {
    int32_t token = -1;
    float logprob = 0.0f;
    int32_t rank = 0;   // 1 = most likely
};

// log Σ exp(row): max + log of the shifted sum; -inf when every entry is -inf.
double log_sum_exp(const float * row, int32_t n);

// vLLM's rank: the number of tokens whose logit is ≥ row[token] (so ties rank after each other).
int32_t logprob_rank(const float * row, int32_t n, int32_t token);

// The n_top most likely tokens, largest first (ties: lower id first), ranks 1..n_top.
// pre: 0 ≤ n_top ≤ n; out has n_top slots.
void top_logprobs(const float * row, int32_t n, double lse, int32_t n_top, token_logprob * out, sampler_workspace & ws);

// Prompt logprobs for one position: `row` is the model's raw logits at position i-1 and `token` the
// prompt token at i; plain log-softmax. The first prompt position has no entry (the caller writes null).
// pre: 0 ≤ token < n_vocab; top_out has n_top slots.
token_logprob prompt_logprob(const float * row, int32_t n_vocab, int32_t token, int32_t n_top, token_logprob * top_out,
                             sampler_workspace & ws);

} // namespace tmill
