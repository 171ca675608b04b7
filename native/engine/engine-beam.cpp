// Beam search in the engine thread: one request = up to `width` scheduler sequences sharing KV blocks
// copy-on-write. The scheduler hands out each live beam's logits row (external_tokens: nothing is
// committed for it); once every live beam has its row, beam_search::step ranks the candidates and the
// sequences are re-mapped: the first new beam over a parent keeps the parent's sequence and appends its
// token, further ones fork the parent (no recompute), parents nobody extends are freed.
#include <algorithm>
#include <cmath>
#include <string>

#include "base/error.h"
#include "engine/engine-impl.h"

namespace tmill {

// pre: a.req.use_beam_search, a.req validated by admit() (n within max_num_seqs, prompt non-empty).
void engine_impl::admit_beam(active_request & a) {
    const engine_request & q = a.req;
    TM_CHECK(std::isfinite(q.length_penalty), invalid_argument, "length_penalty must be a finite number");
    beam_params bp;
    bp.width = q.n;
    bp.length_penalty = q.length_penalty;
    bp.eos_token_ids = model_->vocab->eog_ids();
    bp.ignore_eos = q.ignore_eos;
    bp.include_stop_str_in_output = q.include_stop_str_in_output;
    auto b = std::make_unique<beam_state>();
    b->search = std::make_unique<beam_search>(bp, int32_t(q.prompt.size()));
    const int32_t n_vocab = int32_t(model_->hp->n_vocab);
    b->n_top = std::min(2 * q.n, n_vocab);
    b->seq_of.assign(1, 0); // the prompt alone is beam 0 on sequence 0
    b->seq_of.reserve(size_t(q.n));
    b->tops.resize(size_t(q.n) * size_t(b->n_top));
    b->ready.assign(size_t(q.n), 0);
    b->top_ptrs.reserve(size_t(q.n));
    b->n_tops.reserve(size_t(q.n));
    b->next_seq_of.reserve(size_t(q.n));
    b->parent_used.reserve(size_t(q.n));
    a.beam = std::move(b);
}

// NOTE(beam): candidates are the top 2·width of log_softmax(logits / temperature), or of the plain
// log_softmax at temperature 0 — vLLM's beam search reads its sub-requests' logprobs, which
// (docs/http-api.md#logprobs) apply temperature when > 0 and are the raw distribution at 0. Penalties,
// top_p/top_k, seeds and stop strings play no part (vLLM ignores them under beam search).
void engine_impl::beam_score_row(active_request & a, int32_t seq, const float * logits) {
    beam_state & b = *a.beam;
    const auto it = std::find(b.seq_of.begin(), b.seq_of.end(), seq);
    TM_CHECK(it != b.seq_of.end(), internal, "beam search: a logits row for a sequence that is no live beam");
    const int32_t beam = int32_t(it - b.seq_of.begin());
    const int32_t n_vocab = int32_t(row_copy_.size());
    const float t = a.req.sampling.temperature;
    if (t > 0.0f) {
        for (int32_t i = 0; i < n_vocab; ++i) row_copy_[size_t(i)] = logits[i] / t;
    } else {
        std::copy(logits, logits + n_vocab, row_copy_.begin());
    }
    const double lse = log_sum_exp(row_copy_.data(), n_vocab);
    top_logprobs(row_copy_.data(), n_vocab, lse, b.n_top, b.tops.data() + size_t(beam) * size_t(b.n_top), workspace_);
    b.ready[size_t(beam)] = 1;
}

bool engine_impl::beam_advance(active_request & a) {
    beam_state & b = *a.beam;
    const size_t n_old = b.seq_of.size();
    for (size_t i = 0; i < n_old; ++i) {
        if (!b.ready[i]) return false; // a sibling's row comes in a later step (budget, recompute)
    }
    b.top_ptrs.clear();
    b.n_tops.clear();
    for (size_t i = 0; i < n_old; ++i) {
        b.top_ptrs.push_back(b.tops.data() + i * size_t(b.n_top));
        b.n_tops.push_back(b.n_top);
    }
    const std::vector<int32_t> & parents = b.search->step(b.top_ptrs, b.n_tops);
    ++b.n_steps;
    const std::vector<beam_hypothesis> & live = b.search->live();
    n_generation_tokens_ += uint64_t(live.size());
    if (b.search->done() || b.n_steps >= a.max_tokens) {
        beam_finish(a);
        return true;
    }
    // Re-map: first children keep (and extend) their parent's sequence; unused parents are freed
    // before the forks so a fork can take a freed slot; other children fork copy-on-write.
    const uint64_t id = a.req.id;
    b.parent_used.assign(n_old, 0);
    b.next_seq_of.assign(live.size(), -1);
    for (size_t j = 0; j < live.size(); ++j) {
        const int32_t p = parents[j];
        if (b.parent_used[size_t(p)]) continue;
        b.parent_used[size_t(p)] = 1;
        scheduler_.append_token(id, b.seq_of[size_t(p)], live[j].tokens.back());
        b.next_seq_of[j] = b.seq_of[size_t(p)];
    }
    for (size_t p = 0; p < n_old; ++p) {
        if (!b.parent_used[p]) scheduler_.finish_sequence(id, b.seq_of[p]); // live is non-empty: one parent stays
    }
    for (size_t j = 0; j < live.size(); ++j) {
        if (b.next_seq_of[j] >= 0) continue;
        const int32_t child = scheduler_.fork_sequence(id, b.seq_of[size_t(parents[j])]);
        scheduler_.set_last_token(id, child, live[j].tokens.back());
        b.next_seq_of[j] = child;
    }
    b.seq_of.swap(b.next_seq_of);
    b.ready.assign(b.ready.size(), 0);
    return false;
}

// One finish record per choice, rank order (record seq i = rank i), then the request is over.
void engine_impl::beam_finish(active_request & a) {
    const beam_state & b = *a.beam;
    const std::vector<beam_hypothesis> best = b.search->finish(a.req.n);
    TM_CHECK(!best.empty(), internal, "beam search ended without a hypothesis");
    const sched::request * r = scheduler_.find(a.req.id);
    if (r && r->n_cached_tokens >= 0) a.n_cached_tokens = r->n_cached_tokens;
    tok::detok_options opt;
    opt.skip_special_tokens = a.req.skip_special_tokens;
    opt.spaces_between_special_tokens = a.req.spaces_between_special_tokens;
    for (size_t i = 0; i < best.size(); ++i) {
        const beam_hypothesis & h = best[i];
        engine_record rec;
        rec.id = a.req.id;
        rec.seq = int32_t(i);
        rec.tokens = h.tokens;
        // vLLM decodes the text without a trailing EOS even when the token is kept
        const size_t n_text = h.tokens.size() - (h.ended_eos && a.req.include_stop_str_in_output ? 1 : 0);
        rec.text = model_->vocab->detokenize(h.tokens.data(), n_text, opt);
        rec.finish = h.ended_eos ? engine_finish::stop : engine_finish::length;
        rec.cum_logprob = h.cum_logprob;
        rec.n_prompt_tokens = int32_t(a.req.prompt.size());
        rec.n_completion_tokens = int32_t(h.tokens.size());
        rec.n_cached_tokens = a.n_cached_tokens;
        rec.done = i + 1 == best.size();
        records_.push_back(std::move(rec));
    }
    for (choice_state & ch : a.choices) ch.finished = true;
    a.n_live = 0;
    scheduler_.finish_request(a.req.id);
}

} // namespace tmill
