// sampler: one request's (one choice's) sampling state — its processor chain, its random stream and
// its logprob buffers — built and validated at admission, then called once per step by the engine
// thread with that sequence's logits row.
#pragma once

#include "sample/logits-processor.h"
#include "sample/logprobs.h"
#include "sample/rng.h"

#include <cstdint>
#include <vector>

namespace tmill {

struct sample_result {
    int32_t token = -1;
    float logprob = 0.0f;                 // of `token` in the reported distribution (valid when logprobs on)
    int32_t rank = 0;                     // vLLM rank of `token` (valid when logprobs on)
    const token_logprob * top = nullptr;  // (n_top) largest first; owned by the sampler, valid until its next call
    int32_t n_top = 0;
};

struct request_shared;

class sampler {
public:
    // Validates p against shape (tmill::error invalid_argument with vLLM's messages) and builds the chain:
    // grammar mask, allowed_token_ids, bad_words, min_tokens, logit_bias, custom non-invariant processors, repetition,
    // frequency, presence, temperature, min_p, top_k, top_p, custom argmax-invariant processors.
    // `shared` (may be null): what the choices of one request share (sample/processors.h).
    sampler(const sampling_params & p, const request_shape & shape, request_shared * shared = nullptr);

    // pre: row has shape.n_vocab logits of this sequence; history holds its prompt and output so far.
    // Clobbers row. Picks a token and accept()s it. No allocation, no throw.
    sample_result sample(float * row, const token_history & history, sampler_workspace & ws);

    // The two halves of sample(), for callers that choose the token themselves (beam search):
    // process() leaves in row the distribution logprobs are reported from (after penalties, masks and
    // temperature, before truncation); accept() records the chosen token.
    void process(float * row, const token_history & history, sampler_workspace & ws);
    void accept(int32_t token);

    bool greedy() const { return greedy_; }
    bool logprobs() const { return logprobs_; }
    int32_t n_top() const { return (int32_t)top_.size(); }
    uint64_t seed() const { return seed_; }
    // The first processor failure (see logits_processor::failure), or null.
    const char * failure() const {
        for (const auto & x : chain_) if (const char * f = x->failure()) return f;
        return nullptr;
    }
    const std::vector<processor_ptr> & chain() const { return chain_; }

private:
    int32_t choose_random(const float * row, sampler_workspace & ws);

    int32_t n_vocab_;
    bool greedy_;
    bool logprobs_;
    uint64_t seed_;
    rng rng_;
    std::vector<processor_ptr> chain_;     // stage order; greedy requests hold no argmax-invariant ones
    size_t n_before_truncate_ = 0;         // chain_[0, n) run before the logprob snapshot
    std::vector<token_logprob> top_;       // (n_top) this step's top logprobs
};

} // namespace tmill
