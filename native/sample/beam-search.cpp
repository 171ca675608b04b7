#include "sample/beam-search.h"

#include "base/error.h"

#include <algorithm>
#include <cmath>

namespace tmill {

double beam_score(double cum_logprob, int32_t n_tokens, float length_penalty) {
    return cum_logprob / std::pow((double)n_tokens, (double)length_penalty);
}

beam_search::beam_search(const beam_params & p, int32_t n_prompt) : p_(p), n_prompt_(n_prompt) {
    TM_CHECK(p.width >= 1, invalid_argument, "beam width must be at least 1, got " + std::to_string(p.width));
    TM_CHECK(n_prompt >= 1, invalid_argument, "beam search needs a non-empty prompt");
    live_.emplace_back();
}

bool beam_search::is_eos(int32_t token) const {
    return !p_.ignore_eos && std::find(p_.eos_token_ids.begin(), p_.eos_token_ids.end(), token) != p_.eos_token_ids.end();
}

double beam_search::score_of(const beam_hypothesis & h) const {
    // vLLM scores the full token list (prompt + output) and drops a trailing EOS from the length;
    // a completed beam without its EOS (include_stop_str_in_output off) has no EOS to drop.
    int32_t n = n_prompt_ + (int32_t)h.tokens.size();
    if (h.ended_eos && p_.include_stop_str_in_output) --n;
    return beam_score(h.cum_logprob, std::max(n, 1), p_.length_penalty);
}

// NOTE(beam): vLLM's loop — every live beam's top candidates become hypotheses; EOS ones complete at
// once, the rest are ranked by length-penalised score and cut to `width`. Stable ordering makes ties
// resolve in (beam, candidate) order, as Python's sorted does.
const std::vector<int32_t> & beam_search::step(const std::vector<const token_logprob *> & tops,
                                               const std::vector<int32_t> & n_tops) {
    TM_CHECK(tops.size() == live_.size() && n_tops.size() == live_.size(), invalid_argument,
             "beam_search::step: one candidate list per live beam expected");
    struct cand {
        int32_t parent;
        int32_t token;
        double cum;
        double score;
    };
    std::vector<cand> cands;
    for (size_t b = 0; b < live_.size(); ++b) {
        const beam_hypothesis & parent = live_[b];
        for (int32_t j = 0; j < n_tops[b]; ++j) {
            const token_logprob & t = tops[b][j];
            const double cum = parent.cum_logprob + (double)t.logprob;
            if (is_eos(t.token)) {
                beam_hypothesis h;
                h.tokens = parent.tokens;
                if (p_.include_stop_str_in_output) h.tokens.push_back(t.token);
                h.cum_logprob = cum;
                h.ended_eos = true;
                h.score = score_of(h);
                completed_.push_back(std::move(h));
            } else {
                const int32_t n = n_prompt_ + (int32_t)parent.tokens.size() + 1;
                cands.push_back({(int32_t)b, t.token, cum, beam_score(cum, n, p_.length_penalty)});
            }
        }
    }
    std::stable_sort(cands.begin(), cands.end(), [](const cand & a, const cand & b) { return a.score > b.score; });
    if ((int32_t)cands.size() > p_.width) cands.resize((size_t)p_.width);

    std::vector<beam_hypothesis> next;
    parents_.clear();
    for (const cand & c : cands) {
        beam_hypothesis h;
        h.tokens = live_[c.parent].tokens;
        h.tokens.push_back(c.token);
        h.cum_logprob = c.cum;
        h.score = c.score;
        next.push_back(std::move(h));
        parents_.push_back(c.parent);
    }
    live_ = std::move(next);
    return parents_;
}

std::vector<beam_hypothesis> beam_search::finish(int32_t n) const {
    std::vector<beam_hypothesis> all = completed_;
    for (const auto & h : live_) all.push_back(h);
    for (auto & h : all) h.score = score_of(h);
    std::stable_sort(all.begin(), all.end(),
                     [](const beam_hypothesis & a, const beam_hypothesis & b) { return a.score > b.score; });
    if ((int32_t)all.size() > n) all.resize((size_t)std::max(n, 0));
    return all;
}

} // namespace tmill
