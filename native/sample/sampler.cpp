#include "sample/sampler.h"

#include "base/error.h"
#include "sample/processor-registry.h"
#include "sample/processors.h"
#include "sample/vec-math.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace tmill {

sampler_workspace::sampler_workspace(int32_t n)
    : n_vocab(n), values((size_t)n), index((size_t)n), lp_row((size_t)n), candidates((size_t)n) {
    TM_CHECK(n > 0, invalid_argument, "sampler_workspace: n_vocab must be positive");
}

static uint64_t seed_for(const sampling_params & p) {
    // vLLM treats seed -1 as "no seed" (newer); we do too.
    return p.has_seed && p.seed != -1 ? (uint64_t)p.seed : rng::random_seed();
}

// NOTE(sampler): the chain runs in vLLM v1's order — masks and biases, then penalties, on raw
// logits; then temperature; then truncation. Logprobs are read between temperature and truncation
// (docs/architecture.md#sampling), so a greedy request reports the plain log-softmax of its masked, penalised
// logits.
sampler::sampler(const sampling_params & p, const request_shape & shape, request_shared * shared)
    : n_vocab_(shape.n_vocab),
      greedy_(effective_temperature(p.temperature) == 0.0f),
      logprobs_(p.logprobs),
      seed_(seed_for(p)),
      rng_(seed_, (uint64_t)p.choice_index) {
    TM_CHECK(shape.n_vocab > 0, invalid_argument, "sampler: n_vocab must be positive");
    TM_CHECK(shape.n_prompt >= 0 && shape.max_output >= 0, invalid_argument, "sampler: negative request shape");
    TM_CHECK(p.choice_index >= 0, invalid_argument, "sampler: choice_index must be non-negative");

    int32_t n_top = 0;
    if (p.logprobs) {
        TM_CHECK(p.top_logprobs >= -1, invalid_argument,
                 "logprobs must be non-negative or -1, got " + std::to_string(p.top_logprobs) + ".");
        const int32_t max_lp = shape.max_logprobs == -1 ? shape.n_vocab : shape.max_logprobs;
        n_top = p.top_logprobs == -1 ? shape.n_vocab : p.top_logprobs;
        TM_CHECK(n_top <= max_lp, invalid_argument,
                 "Requested sample logprobs of " + std::to_string(n_top) + ", which is greater than max allowed: " +
                     std::to_string(max_lp));
        n_top = std::min(n_top, shape.n_vocab);
    }
    top_.resize((size_t)n_top);

    // Every factory runs (so every field is validated) even when greedy drops its processor.
    std::vector<processor_ptr> all;
    auto add = [&all](processor_ptr x) { if (x) all.push_back(std::move(x)); };
    add(make_grammar_mask(p, shape));   // first, as vLLM applies the structured-output bitmask
    add(make_allowed_token_ids(p, shape));
    add(make_bad_words(p, shape));
    add(make_min_tokens(p, shape));
    add(make_logit_bias(p, shape, shared));
    std::vector<processor_ptr> custom = make_custom_processors(p.xargs, shape);
    for (auto & c : custom) if (!c->argmax_invariant()) add(std::move(c));
    add(make_repetition_penalty(p, shape));
    add(make_frequency_penalty(p, shape));
    add(make_presence_penalty(p, shape));
    add(make_temperature(p, shape));
    add(make_min_p(p, shape));
    add(make_top_k(p, shape));
    add(make_top_p(p, shape));
    for (auto & c : custom) if (c) add(std::move(c));

    // Keep stage order stable (a custom processor may declare any stage).
    std::stable_sort(all.begin(), all.end(),
                     [](const processor_ptr & a, const processor_ptr & b) { return a->stage() < b->stage(); });
    for (auto & x : all) {
        if (greedy_ && x->argmax_invariant()) continue;
        chain_.push_back(std::move(x));
    }
    n_before_truncate_ = 0;
    while (n_before_truncate_ < chain_.size() && chain_[n_before_truncate_]->stage() != processor_stage::truncate)
        ++n_before_truncate_;
}

void sampler::process(float * row, const token_history & history, sampler_workspace & ws) {
    for (size_t i = 0; i < n_before_truncate_; ++i) chain_[i]->apply(row, history, ws);
}

void sampler::accept(int32_t token) {
    for (auto & x : chain_) x->accept(token);
}

// Exact inverse-CDF draw over the (truncated) softmax of row; the exponentials are kept in
// ws.values so the walk does not recompute them.
int32_t sampler::choose_random(const float * row, sampler_workspace & ws) {
    const int32_t n = n_vocab_;
    if (ws.n_candidates >= 0) {
        // Sparse: a truncation left a short list of survivors.
        const int32_t * cand = ws.candidates.data();
        float mx = -std::numeric_limits<float>::infinity();
        for (int32_t j = 0; j < ws.n_candidates; ++j) mx = row[cand[j]] > mx ? row[cand[j]] : mx;
        if (mx == -std::numeric_limits<float>::infinity()) return ws.n_candidates > 0 ? cand[0] : 0;
        float * e = ws.values.data();  // (n_candidates) exp(row - max) per candidate
        double z = 0.0;
        for (int32_t j = 0; j < ws.n_candidates; ++j) {
            e[j] = exp_approx(row[cand[j]] - mx);
            z += e[j];
        }
        const double u = rng_.next_double() * z;
        double cum = 0.0;
        int32_t last = cand[0];
        for (int32_t j = 0; j < ws.n_candidates; ++j) {
            if (e[j] == 0.0f) continue;
            cum += e[j];
            last = cand[j];
            if (cum > u) return cand[j];
        }
        return last;
    }
    const float mx = row_max(row, n);
    if (mx == -std::numeric_limits<float>::infinity()) return 0;
    float * e = ws.values.data();  // (n_vocab) exp(row - max); 0 for masked tokens
    const double z = sum_exp(row, n, mx, e);
    const double u = rng_.next_double() * z;
    double cum = 0.0;
    int32_t last = -1;
    for (int32_t i = 0; i < n; ++i) {
        if (e[i] == 0.0f) continue;
        cum += e[i];
        last = i;
        if (cum > u) return i;
    }
    return last;  // rounding left u just above the running total: the last token with mass
}

sample_result sampler::sample(float * row, const token_history & history, sampler_workspace & ws) {
    process(row, history, ws);
    const float * dist = row;  // the distribution logprobs are reported from
    if (logprobs_ && !greedy_ && n_before_truncate_ < chain_.size()) {
        std::memcpy(ws.lp_row.data(), row, sizeof(float) * (size_t)n_vocab_);
        dist = ws.lp_row.data();
    }
    ws.n_candidates = -1;
    for (size_t i = n_before_truncate_; i < chain_.size(); ++i) chain_[i]->apply(row, history, ws);

    sample_result r;
    if (greedy_) {
        // torch.argmax: the first maximum wins.
        r.token = row_argmax(row, n_vocab_);
    } else {
        r.token = choose_random(row, ws);
    }
    if (logprobs_) {
        const double lse = log_sum_exp(dist, n_vocab_);
        r.logprob = (float)((double)dist[r.token] - lse);
        r.rank = logprob_rank(dist, n_vocab_, r.token);
        top_logprobs(dist, n_vocab_, lse, (int32_t)top_.size(), top_.data(), ws);
        r.top = top_.data();
        r.n_top = (int32_t)top_.size();
    }
    accept(r.token);
    return r;
}

} // namespace tmill
