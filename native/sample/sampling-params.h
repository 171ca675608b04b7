// sampling_params: one request's sampling fields as converted once on the JS thread. Defaults are
// vLLM's built-in ones (temperature 1, top_p 1, top_k off, min_p 0, penalties off). Validation
// happens when a sampler is built (admission), with vLLM's messages.
#pragma once

#include "sample/xargs.h"

#include <cstdint>
#include <memory>
#include <string>
#include <optional>
#include <utility>
#include <vector>

namespace tmill {

namespace grammar { struct compiled_grammar; }

struct sampling_params {
    float temperature = 1.0f;          // 0 = greedy; 0 < t < 0.01 is raised to 0.01 (vLLM)
    int32_t top_k = 0;                 // 0 or -1 = off
    float top_p = 1.0f;                // (0, 1]
    float min_p = 0.0f;                // [0, 1]; 0 = off
    float repetition_penalty = 1.0f;   // > 0; 1 = off; prompt + output tokens
    float frequency_penalty = 0.0f;    // [-2, 2]; output tokens only
    float presence_penalty = 0.0f;     // [-2, 2]; output tokens only

    std::vector<std::pair<int32_t, float>> logit_bias;              // (token id, bias); bias clamped to ±100
    std::optional<std::vector<int32_t>> allowed_token_ids;          // nullopt = no mask; empty = error
    std::vector<std::vector<int32_t>> bad_words_token_ids;          // every tokenized variant of every bad word

    int32_t min_tokens = 0;            // EOS and stop token ids masked until this many output tokens
    int32_t max_tokens = INT32_MAX;    // only used to validate min_tokens ≤ max_tokens
    std::vector<int32_t> stop_token_ids;   // masked by min_tokens (stopping is the stop_checker's job)
    std::vector<int32_t> eos_token_ids;    // model + generation-config EOS ids; masked by min_tokens even with ignore_eos

    bool logprobs = false;             // report the chosen token's logprob
    int32_t top_logprobs = 0;          // N extra top entries per token; -1 = the whole vocabulary

    bool has_seed = false;             // false → a random seed is drawn at admission
    int64_t seed = 0;
    int32_t choice_index = 0;          // n > 1: each choice gets its own stream derived from (seed, index)

    xargs_map xargs;                   // vllm_xargs; read only by custom processors

    // Grammar-constrained decoding (structured outputs): each choice matches its own copy of the
    // grammar's state; null = unconstrained.
    std::shared_ptr<const grammar::compiled_grammar> grammar;
    // Non-empty: the grammar applies only once the output contains this text (vLLM applies structured
    // outputs after the reasoning block, i.e. after "</think>"); the output after it must follow the
    // grammar. Empty: from the first token.
    std::string grammar_after;
};

} // namespace tmill
