// One engine step: schedule → (block copies) → one batched forward pass → sample each sequence that
// reached its last known token → commit → detokenize / stop checks → records. Plus admission.
#include <algorithm>
#include <cstring>
#include <string>

#include "base/error.h"
#include "engine/engine-impl.h"
#include "sample/processors.h"

namespace tmill {

void engine_impl::admit(engine_request && request) {
    const uint64_t id = request.id;
    try {
        TM_CHECK(active_.count(id) == 0, invalid_argument, "request id " + std::to_string(id) + " is already live");
        const int32_t n_prompt = int32_t(request.prompt.size());
        const int32_t n_vocab = int32_t(model_->hp->n_vocab);
        TM_CHECK(n_prompt > 0, invalid_argument, "the prompt is empty");
        for (int32_t i = 0; i < n_prompt; ++i) {
            const int32_t t = request.prompt[size_t(i)];
            TM_CHECK(t >= 0 && t < n_vocab, invalid_argument,
                     "prompt token " + std::to_string(t) + " at index " + std::to_string(i) + " is out of vocabulary (0.." +
                     std::to_string(n_vocab - 1) + ")");
        }
        TM_CHECK(request.n >= 1 && request.n <= params_.max_num_seqs, invalid_argument,
                 "n must be between 1 and maxNumSeqs (" + std::to_string(params_.max_num_seqs) + "), got " + std::to_string(request.n));
        TM_CHECK(request.max_tokens == -1 || request.max_tokens >= 1, invalid_argument,
                 "max_tokens must be at least 1, got " + std::to_string(request.max_tokens));
        const int32_t room = max_model_len_ - n_prompt;
        // A prompt that leaves no room for one token gets vLLM's prompt message (as the chat layer does):
        // the max_tokens one below would count an omitted max_tokens as 0 and report a request that fits.
        TM_CHECK(room >= 1, invalid_argument,
                 "The decoder prompt (length " + std::to_string(n_prompt) +
                 ") plus the number of requested output tokens (at least 1) is longer than the maximum model length of " +
                 std::to_string(max_model_len_) +
                 ". Make sure that `max_model_len` is no smaller than the number of text tokens plus at least one output token.");
        TM_CHECK(request.max_tokens == -1 || request.max_tokens <= room, invalid_argument,
                 "This model's maximum context length is " + std::to_string(max_model_len_) + " tokens. However, you requested " +
                 std::to_string(int64_t(n_prompt) + request.max_tokens) + " tokens (" + std::to_string(n_prompt) + " in the messages, " +
                 std::to_string(request.max_tokens) + " in the completion). Please reduce the length of the messages or completion.");
        validate_repetition_params(request.repetition);
        // Beam search ranks raw log-softmax candidates without the sampler chain, so a grammar would be
        // silently ignored: refuse it instead.
        TM_CHECK(!(request.use_beam_search && request.sampling.grammar), invalid_argument,
                 "structured outputs (a grammar) cannot be combined with beam search");
        const int32_t max_prompt_top = params_.max_logprobs == -1 ? n_vocab : params_.max_logprobs;
        TM_CHECK(request.prompt_logprobs >= -1 && request.prompt_logprobs <= max_prompt_top, invalid_argument,
                 "Requested prompt logprobs of " + std::to_string(request.prompt_logprobs) +
                 ", which is greater than max allowed: " + std::to_string(max_prompt_top));

        auto a = std::make_unique<active_request>();
        a->max_tokens = request.max_tokens == -1 ? room : request.max_tokens;
        request.sampling.max_tokens = a->max_tokens;
        request.sampling.eos_token_ids = model_->vocab->eog_ids();
        request_shape shape;
        shape.n_vocab = n_vocab;
        shape.n_prompt = n_prompt;
        shape.max_output = a->max_tokens;
        shape.max_logprobs = params_.max_logprobs;
        shape.prompt = request.prompt.data();
        if (!request.sampling.has_seed) {
            // One seed for the request from the engine's stream (random, or from the engine-wide seed);
            // each choice derives its own stream from (seed, index).
            request.sampling.has_seed = true;
            request.sampling.seed = int64_t(seed_stream_.next_u64() >> 1);
        }
        if (request.use_beam_search) request.prompt_logprobs = -1; // ignored under beam search, as vLLM
        a->choices.resize(size_t(request.n));
        // Each choice's sampler reads the request's own fields (no copy of its id lists per choice) and
        // shares what request_shared holds (the merged logit_bias).
        request_shared shared;
        for (int32_t c = 0; c < request.n && !request.use_beam_search; ++c) {
            choice_state & ch = a->choices[size_t(c)];
            request.sampling.choice_index = c;
            ch.smp = std::make_unique<sampler>(request.sampling, shape, &shared);
            ch.out = std::make_unique<output_stream>(*model_->vocab, request, a->max_tokens, max_model_len_);
            ch.output.reserve(size_t(a->max_tokens));
        }
        a->n_live = request.n;
        if (request.prompt_logprobs >= 0) {
            a->prompt_logprobs.reserve(size_t(n_prompt - 1) * size_t(request.prompt_logprobs + 1));
        }

        sched::request_params sp;
        sp.id = id;
        sp.prompt = request.prompt;
        sp.priority = request.priority;
        sp.cache_salt = request.cache_salt;
        sp.n_seqs = request.n;
        sp.n_max_tokens = a->max_tokens;
        sp.skip_prefix_cache = request.prompt_logprobs >= 0;
        sp.external_tokens = request.use_beam_search;
        a->req = std::move(request);
        if (a->req.use_beam_search) admit_beam(*a);
        // A prompt larger than the whole KV pool is refused now, not queued: in the queue it would wait
        // behind every request blocked ahead of it. Each choice ends with the error and its usage.
        const std::string refusal = scheduler_.refusal_for_prompt(n_prompt);
        if (!refusal.empty()) {
            finish_all(*a, engine_finish::error, "invalid_argument", refusal);
            return;
        }
        scheduler_.submit(std::move(sp));
        n_prompt_tokens_ += uint64_t(n_prompt);
        active_.emplace(id, std::move(a));
    } catch (const error & e) {
        fail(id, e.code_name(), e.what());
    }
}

bool engine_impl::finish_choice(active_request & a, int32_t seq, engine_finish reason, engine_record & rec) {
    choice_state & ch = a.choices[size_t(seq)];
    ch.finished = true;
    --a.n_live;
    rec.finish = reason;
    rec.n_prompt_tokens = int32_t(a.req.prompt.size());
    rec.n_completion_tokens = int32_t(ch.output.size());
    const sched::request * r = scheduler_.find(a.req.id);
    if (r && r->n_cached_tokens >= 0) a.n_cached_tokens = r->n_cached_tokens;
    rec.n_cached_tokens = a.n_cached_tokens;
    rec.done = a.n_live == 0;
    return rec.done;
}

void engine_impl::finish_all(active_request & a, engine_finish reason, const char * error_code, const std::string & error_message) {
    for (int32_t c = 0; c < int32_t(a.choices.size()); ++c) {
        if (a.choices[size_t(c)].finished) continue;
        engine_record rec;
        rec.id = a.req.id;
        rec.seq = c;
        if (reason == engine_finish::error) {
            rec.error_code = error_code;
            rec.error_message = error_message;
        }
        finish_choice(a, c, reason, rec);
        emit(std::move(rec));
    }
}

// Samples the next token of choice `seq` from `logits` (left intact for the choice's siblings).
void engine_impl::sample_entry(active_request & a, int32_t seq, const float * logits) {
    choice_state & ch = a.choices[size_t(seq)];
    std::memcpy(row_copy_.data(), logits, row_copy_.size() * sizeof(float));
    token_history history;
    history.prompt = a.req.prompt.data();
    history.n_prompt = int32_t(a.req.prompt.size());
    history.output = ch.output.data();
    history.n_output = int32_t(ch.output.size());
    const sample_result res = ch.smp->sample(row_copy_.data(), history, workspace_);
    sampled_.push_back(res.token);

    engine_record rec;
    rec.id = a.req.id;
    rec.seq = seq;
    rec.tokens.push_back(res.token);
    if (a.req.prompt_logprobs >= 0 && !a.prompt_logprobs_sent) {
        rec.prompt_logprobs = std::move(a.prompt_logprobs);
        rec.n_top_prompt_logprobs = a.req.prompt_logprobs;
        a.prompt_logprobs_sent = true;
    }
    if (ch.smp->logprobs()) {
        rec.n_top_logprobs = res.n_top;
        rec.logprobs.push_back(logprob_entry{res.token, res.logprob, res.rank});
        for (int32_t k = 0; k < res.n_top; ++k) rec.logprobs.push_back(logprob_entry{res.top[k].token, res.top[k].logprob, res.top[k].rank});
    }
    records_.push_back(std::move(rec));
}

void engine_impl::score_prompt_rows(int32_t first, int32_t count) {
    const size_t n_vocab = model_->hp->n_vocab;
    for (int32_t k = 0; k < count; ++k) {
        const prompt_row & pr = prompt_rows_[size_t(first + k)];
        active_request & a = *pr.a;
        const int32_t n_top = a.req.prompt_logprobs;
        const int32_t token = a.req.prompt[size_t(pr.position + 1)];
        const token_logprob lp = prompt_logprob(logits_.data() + size_t(k) * n_vocab, int32_t(n_vocab), token, n_top,
                                                top_scratch_.data(), workspace_);
        a.prompt_logprobs.push_back(logprob_entry{token, lp.logprob, lp.rank});
        for (int32_t t = 0; t < n_top; ++t) {
            a.prompt_logprobs.push_back(logprob_entry{top_scratch_[size_t(t)].token, top_scratch_[size_t(t)].logprob, top_scratch_[size_t(t)].rank});
        }
        a.n_prompt_logprobs_done = pr.position + 1;
    }
}

void engine_impl::step() {
    scheduler_.schedule(plan_);
    for (const sched::rejected_request & rej : plan_.rejected) {
        // A running request that outgrew the pool (admission refuses a prompt larger than it): mostly an
        // n > 1 request preempted after its choices forked (recomputed, they no longer share the prompt's
        // blocks). Every live choice ends with the error, with its usage: they have streamed tokens.
        finish_all(*active_.at(rej.request_id), engine_finish::error, "invalid_argument", rej.message);
        active_.erase(rej.request_id);
    }
    if (plan_.entries.empty()) {
        scheduler_.commit(plan_, nullptr, 0);
        return;
    }
    for (const sched::block_copy & c : plan_.copies) kv_.copy_block(c.src, c.dst);

    // An entry gets a logits row when it reached its last known token and samples, or is a beam.
    const auto wants_row = [](const sched::plan_entry & e) { return e.need_logits && (e.n_samples > 0 || e.req->external_tokens); };
    // Lay the plan out as one batch: every entry's span; output rows are first the rows sampled (one per
    // entry that reached its last known token), then the prompt positions whose logprobs were asked for.
    int32_t n_rows = 0, n_out = 0;
    prompt_rows_.clear();
    for (size_t i = 0; i < plan_.entries.size(); ++i) {
        const sched::plan_entry & e = plan_.entries[i];
        seqs_[i] = seq_blocks{plan_.block_ids.data() + e.block_offset, e.n_blocks};
        for (int32_t j = 0; j < e.n_tokens; ++j) {
            positions_[size_t(n_rows)] = e.pos_start + j;
            seq_index_[size_t(n_rows)] = int32_t(i);
            ++n_rows;
        }
        if (wants_row(e)) output_rows_[size_t(n_out++)] = n_rows - 1;
    }
    const int32_t n_sampled_rows = n_out;
    for (size_t i = 0, row0 = 0; i < plan_.entries.size(); row0 += size_t(plan_.entries[i].n_tokens), ++i) {
        const sched::plan_entry & e = plan_.entries[i];
        active_request & a = *active_.at(e.request_id);
        if (a.req.prompt_logprobs < 0 || e.seq_index != 0) continue;
        // Row at position p predicts prompt token p + 1; positions already scored before a preemption
        // are skipped.
        const int32_t n_prompt = int32_t(a.req.prompt.size());
        for (int32_t j = 0; j < e.n_tokens; ++j) {
            const int32_t p = e.pos_start + j;
            if (p >= n_prompt - 1 || p < a.n_prompt_logprobs_done) continue;
            output_rows_[size_t(n_out++)] = int32_t(row0) + j;
            prompt_rows_.push_back({&a, p});
        }
    }
    forward_batch batch;
    batch.n_tokens = n_rows;
    batch.tokens = plan_.token_ids.data();
    batch.positions = positions_.data();
    batch.seq_index = seq_index_.data();
    batch.seqs = seqs_.data();
    batch.n_seqs = int32_t(plan_.entries.size());
    batch.output_rows = output_rows_.data();
    batch.n_outputs = n_out;
    forward_.run(batch);
    ++n_steps_;
    n_tokens_computed_ += uint64_t(n_rows);

    // Prompt logprobs, in chunks that fit the logits buffer, before the sampled rows take it over.
    const int32_t chunk = params_.max_num_seqs;
    for (int32_t first = 0; first < int32_t(prompt_rows_.size()); first += chunk) {
        const int32_t count = std::min(chunk, int32_t(prompt_rows_.size()) - first);
        forward_.logits(n_sampled_rows + first, count, logits_.data());
        score_prompt_rows(first, count);
    }
    forward_.logits(0, n_sampled_rows, logits_.data());

    // Sample in entry order: one token per sequence whose span reached its last known token, or n tokens
    // (one per choice, from the same row) when an n > 1 prompt completes and forks.
    const size_t n_vocab = model_->hp->n_vocab;
    sampled_.clear();
    records_.clear();
    beam_touched_.clear();
    int32_t row = 0;
    for (const sched::plan_entry & e : plan_.entries) {
        if (!wants_row(e)) continue;
        active_request & a = *active_.at(e.request_id);
        const float * logits = logits_.data() + size_t(row++) * n_vocab;
        if (a.beam) {
            beam_score_row(a, e.seq_index, logits);
            if (std::find(beam_touched_.begin(), beam_touched_.end(), &a) == beam_touched_.end()) beam_touched_.push_back(&a);
        } else if (e.n_samples == 1) {
            sample_entry(a, e.seq_index, logits);
        } else {
            for (int32_t c = 0; c < e.n_samples; ++c) sample_entry(a, c, logits);
        }
    }
    scheduler_.commit(plan_, sampled_.data(), int32_t(sampled_.size()));

    // Text, stops and limits, now that the scheduler holds the new tokens.
    for (engine_record & rec : records_) {
        active_request & a = *active_.at(rec.id);
        choice_state & ch = a.choices[size_t(rec.seq)];
        const int32_t token = rec.tokens.front();
        ch.output.push_back(token);
        ++n_generation_tokens_;
        const stop_event stop = ch.out->push(token, ch.output.data(), int32_t(ch.output.size()), rec.text);
        engine_finish reason = stop.reason;
        rec.stop_string = stop.stop_string;
        rec.stop_token = stop.stop_token;
        if (reason == engine_finish::none && int32_t(ch.output.size()) >= a.max_tokens) reason = engine_finish::length;
        if (const char * why = ch.smp->failure()) {
            // A grammar that cannot go on: the sampler allowed only EOS; report why instead of a stop.
            reason = engine_finish::error;
            rec.error_code = "grammar_invalid";
            rec.error_message = why;
        }
        if (reason != engine_finish::none) {
            if (finish_choice(a, rec.seq, reason, rec)) {
                scheduler_.finish_request(rec.id);
                active_.erase(rec.id);
            } else {
                scheduler_.finish_sequence(rec.id, rec.seq);
            }
        }
    }
    // Beam requests whose every live beam has its row take a beam step (fork / free / finish).
    for (active_request * a : beam_touched_) {
        const uint64_t id = a->req.id;
        if (beam_advance(*a)) active_.erase(id);
    }
    for (engine_record & rec : records_) emit(std::move(rec));
}

} // namespace tmill
