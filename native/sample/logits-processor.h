// logits_processor: the tiny interface every sampling step goes through (docs/architecture.md#sampling).
// NOTE(sample): a processor is built per request at admission by a factory that validates the
// request's parameters (throwing tmill::error invalid_argument with vLLM's message) and returns nullptr
// when the processor is inactive, so an inactive processor costs nothing per token. apply() edits one
// logits row in place and must neither allocate nor throw; accept() updates state after a token is
// chosen. Argmax-invariant processors are skipped entirely by greedy requests.
#pragma once

#include "sample/sampling-params.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace tmill {

// Where in the chain a processor runs (vLLM v1 order): masks, biases and penalties act on raw
// logits; temperature divides; then the truncations (min_p, top_k, top_p) act on scaled logits.
enum class processor_stage {
    mask,        // allowed_token_ids, bad_words, min_tokens, logit_bias, custom non-invariant processors
    penalty,     // repetition, frequency, presence
    temperature, // temperature
    truncate,    // min_p, top_k, top_p, custom argmax-invariant processors
};

// The token ids of the sequence being sampled; views into the engine's buffers, valid for one call.
struct token_history {
    const int32_t * prompt = nullptr;  // (n_prompt)
    int32_t n_prompt = 0;
    const int32_t * output = nullptr;  // (n_output) tokens generated so far (not the one being chosen)
    int32_t n_output = 0;
};

// What a factory knows about the request besides its parameters.
struct request_shape {
    int32_t n_vocab = 0;         // logits row width
    int32_t n_prompt = 0;        // prompt length at admission
    int32_t max_output = 0;      // upper bound on output tokens (sizes per-request state)
    int32_t max_logprobs = 20;   // server --max-logprobs; -1 = vocabulary
    const int32_t * prompt = nullptr;  // (n_prompt) valid only while the sampler is being built
};

// Scratch shared by every sampler on one engine thread, sized once for the vocabulary (no per-token
// allocation). Contents are garbage between calls.
struct sampler_workspace {
    explicit sampler_workspace(int32_t n_vocab);
    int32_t n_vocab;
    std::vector<float> values;    // (n_vocab) scratch values (selection, sorting)
    std::vector<int32_t> index;   // (n_vocab) scratch token ids (partial sorts)
    std::vector<float> lp_row;    // (n_vocab) the distribution logprobs are reported from
    // Truncation bookkeeping: when n_candidates ≥ 0, candidates[0, n_candidates) lists (a superset
    // of) the row's finite entries, so later truncations and the draw skip the rest of the row.
    // The sampler resets it to -1 (unknown) before the truncate stage; truncate-stage processors
    // only ever lower logits to -inf, which keeps the list valid.
    std::vector<int32_t> candidates;  // (n_vocab)
    int32_t n_candidates = -1;
};

class logits_processor {
public:
    virtual ~logits_processor() = default;
    virtual const char * name() const = 0;
    virtual processor_stage stage() const = 0;
    // True when the processor cannot change which token has the largest logit (greedy skips it).
    virtual bool argmax_invariant() const = 0;
    // pre: row has ws.n_vocab entries. Edits row in place; no allocation, no throw.
    virtual void apply(float * row, const token_history & history, sampler_workspace & ws) = 0;
    // Called once the token for this step is chosen.
    virtual void accept(int32_t token) { (void)token; }
    // Non-null once the processor can no longer do its job for this sequence (a grammar too ambiguous
    // or impossible to continue); the engine then ends the sequence with an error carrying this message.
    virtual const char * failure() const { return nullptr; }
};

using processor_ptr = std::unique_ptr<logits_processor>;

} // namespace tmill
