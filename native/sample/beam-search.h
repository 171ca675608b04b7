// Beam search bookkeeping (vLLM's frontend beam search, docs/architecture.md#beam-search): pure state the
// engine drives. Each step the engine hands over, for every live beam, its top 2·width logprobs; beam_search
// returns which live beam each new beam extends (so the engine forks that sequence copy-on-write).
#pragma once

#include "sample/logprobs.h"

#include <cstdint>
#include <vector>

namespace tmill {

struct beam_params {
    int32_t width = 1;                   // beam width = n
    float length_penalty = 1.0f;         // score = cum_logprob / len^length_penalty
    std::vector<int32_t> eos_token_ids;  // a candidate ending in one of these completes (unless ignore_eos)
    bool ignore_eos = false;
    bool include_stop_str_in_output = false;  // keep the EOS token in a completed beam's tokens
};

struct beam_hypothesis {
    std::vector<int32_t> tokens;   // output tokens (EOS only with include_stop_str_in_output)
    double cum_logprob = 0.0;
    bool ended_eos = false;        // finish `stop` when true, `length` otherwise
    double score = 0.0;            // beam_score at the time it was last ranked
};

// vLLM's get_beam_search_score: len counts prompt + output tokens, minus a trailing EOS.
// pre: n_tokens ≥ 1.
double beam_score(double cum_logprob, int32_t n_tokens, float length_penalty);

class beam_search {
public:
    // pre: width ≥ 1, n_prompt ≥ 1. Starts with one live beam (the prompt alone).
    beam_search(const beam_params & p, int32_t n_prompt);

    const std::vector<beam_hypothesis> & live() const { return live_; }
    const std::vector<beam_hypothesis> & completed() const { return completed_; }
    bool done() const { return live_.empty(); }

    // pre: tops.size() == n_tops.size() == live().size(); tops[i] holds beam i's candidates largest
    // first. Expands every beam, moves EOS candidates to completed, keeps the best `width` others by
    // score (stable, like Python's sorted). Returns parents: new live()[j] extends old live()[parents[j]].
    const std::vector<int32_t> & step(const std::vector<const token_logprob *> & tops, const std::vector<int32_t> & n_tops);

    // The final ranking: completed ∪ live, best first, at most n (vLLM returns `width`).
    std::vector<beam_hypothesis> finish(int32_t n) const;

private:
    bool is_eos(int32_t token) const;
    double score_of(const beam_hypothesis & h) const;

    beam_params p_;
    int32_t n_prompt_;
    std::vector<beam_hypothesis> live_;
    std::vector<beam_hypothesis> completed_;
    std::vector<int32_t> parents_;
};

} // namespace tmill
