// engine: the public facade and the engine thread's life cycle (inbox → admit/abort → step → outbox →
// notify). The per-step work lives in engine-step.cpp.
#include "engine/engine.h"

#include <algorithm>
#include <thread>

#include "base/error.h"
#include "engine/engine-impl.h"

namespace tmill {

engine_params engine_default_params() { return engine_params{}; }

const char * engine_finish_name(engine_finish r) {
    switch (r) {
        case engine_finish::none: return "";
        case engine_finish::stop: return "stop";
        case engine_finish::length: return "length";
        case engine_finish::abort: return "abort";
        case engine_finish::repetition: return "repetition";
        case engine_finish::error: return "error";
    }
    return "";
}

namespace {

int32_t threads_or_default(int32_t n) {
    if (n > 0) return n;
    const unsigned hw = std::thread::hardware_concurrency();
    return hw == 0 ? 1 : int32_t(hw);
}

const hparams & require_weights(const std::shared_ptr<const model> & m) {
    TM_CHECK(m && m->hp && m->weights, invalid_argument, "the model was loaded with vocabOnly and cannot run");
    return *m->hp;
}

sched::scheduler_params scheduler_params_of(const engine_params & p, int32_t n_blocks) {
    sched::scheduler_params s = sched::scheduler_default_params();
    s.n_blocks = n_blocks;
    s.block_size = k_kv_block_size;
    s.max_num_seqs = p.max_num_seqs;
    s.max_num_batched_tokens = p.max_num_batched_tokens;
    s.policy = p.policy == sched_policy_kind::priority ? sched::sched_policy::priority : sched::sched_policy::fcfs;
    s.enable_prefix_caching = p.enable_prefix_caching;
    return s;
}

const engine_params & checked(const engine_params & p) {
    TM_CHECK(p.max_num_seqs >= 1, invalid_argument, "maxNumSeqs must be at least 1");
    TM_CHECK(p.max_num_batched_tokens >= 1, invalid_argument, "maxNumBatchedTokens must be at least 1");
    TM_CHECK(p.max_logprobs >= -1, invalid_argument, "maxLogprobs must be -1 or more");
    TM_CHECK(p.max_model_len >= 0, invalid_argument, "maxModelLen must not be negative");
    TM_CHECK(p.n_threads >= 0 && p.n_threads <= 512, invalid_argument, "threads must be between 0 and 512");
    return p;
}

forward_limits limits_of(const engine_params & p, int32_t max_model_len) {
    forward_limits l;
    l.max_tokens = p.max_num_batched_tokens;
    l.max_outputs = std::max(p.max_num_seqs, p.max_num_batched_tokens);
    l.max_context = max_model_len;
    return l;
}

int32_t model_len_of(const hparams & hp, const engine_params & p) {
    const int32_t train = int32_t(hp.n_ctx_train);
    return p.max_model_len > 0 ? p.max_model_len : train;
}

} // namespace

engine_impl::engine_impl(std::shared_ptr<const model> m, const engine_params & params, std::function<void()> notify)
    : model_(std::move(m)),
      params_(checked(params)),
      max_model_len_(model_len_of(require_weights(model_), params_)),
      notify_(std::move(notify)),
      kv_(*model_->hp, params_.kv_cache_memory),
      pool_(threads_or_default(params_.n_threads)),
      forward_(model_, kv_, pool_, limits_of(params_, max_model_len_)),
      scheduler_(scheduler_params_of(params_, kv_.n_blocks())),
      workspace_(int32_t(model_->hp->n_vocab)),
      seed_stream_(params_.has_seed ? uint64_t(params_.seed) : rng::random_seed(), 0) {
    positions_.resize(size_t(params_.max_num_batched_tokens));
    seq_index_.resize(size_t(params_.max_num_batched_tokens));
    seqs_.resize(size_t(params_.max_num_seqs));
    // Sampled rows (one per sequence) plus prompt-logprob rows (one per prompt token in the batch).
    output_rows_.resize(size_t(limits_of(params_, max_model_len_).max_outputs));
    logits_.resize(size_t(params_.max_num_seqs) * model_->hp->n_vocab);
    sampled_.reserve(size_t(params_.max_num_seqs));
    row_copy_.resize(model_->hp->n_vocab);
    top_scratch_.resize(model_->hp->n_vocab);
    prompt_rows_.reserve(size_t(params_.max_num_batched_tokens));
    beam_touched_.reserve(size_t(params_.max_num_seqs));
    publish_stats();
    thread_ = std::thread([this] { run(); });
}

engine_impl::~engine_impl() { close(); }

void engine_impl::submit(engine_request request) {
    std::lock_guard<std::mutex> lock(inbox_mutex_);
    TM_CHECK(!closing_, disposed, "engine is closed");
    inbox_command c;
    c.what = inbox_command::kind::submit;
    c.request = std::move(request);
    inbox_.push_back(std::move(c));
    inbox_cv_.notify_one();
}

void engine_impl::abort(uint64_t id) {
    std::lock_guard<std::mutex> lock(inbox_mutex_);
    TM_CHECK(!closing_, disposed, "engine is closed");
    inbox_command c;
    c.what = inbox_command::kind::abort;
    c.id = id;
    inbox_.push_back(std::move(c));
    inbox_cv_.notify_one();
}

std::vector<engine_record> engine_impl::drain() {
    std::lock_guard<std::mutex> lock(outbox_mutex_);
    std::vector<engine_record> out;
    out.swap(outbox_);
    return out;
}

engine_stats engine_impl::stats() const {
    std::lock_guard<std::mutex> lock(stats_mutex_);
    return stats_;
}

void engine_impl::request_close() {
    std::lock_guard<std::mutex> lock(inbox_mutex_);
    closing_ = true;
    inbox_cv_.notify_one();
}

void engine_impl::close() {
    {
        std::lock_guard<std::mutex> lock(inbox_mutex_);
        if (closed_) return;
        closed_ = true;
    }
    request_close();
    if (thread_.joinable()) thread_.join();
}

void engine_impl::emit(engine_record && rec) { pending_.push_back(std::move(rec)); }

void engine_impl::publish() {
    publish_stats();
    if (pending_.empty()) return;
    bool was_empty;
    {
        std::lock_guard<std::mutex> lock(outbox_mutex_);
        was_empty = outbox_.empty();
        for (engine_record & rec : pending_) outbox_.push_back(std::move(rec));
    }
    pending_.clear();
    if (was_empty && notify_) notify_();
}

void engine_impl::fail(uint64_t id, const char * code, const std::string & message) {
    engine_record rec;
    rec.id = id;
    rec.finish = engine_finish::error;
    rec.error_code = code;
    rec.error_message = message;
    rec.done = true;
    emit(std::move(rec));
}

// Moves queued commands into commands_; waits for one when `block`. Returns false once closing.
bool engine_impl::take_commands(bool block) {
    std::unique_lock<std::mutex> lock(inbox_mutex_);
    if (block) inbox_cv_.wait(lock, [this] { return closing_ || !inbox_.empty(); });
    commands_.clear();
    while (!inbox_.empty()) {
        commands_.push_back(std::move(inbox_.front()));
        inbox_.pop_front();
    }
    return !closing_;
}

void engine_impl::run() {
    // NOTE(engine): the only thread that touches the scheduler, the KV pool and the samplers. An
    // exception escaping a step fails every live request (engine_fault) and the engine keeps
    // accepting work, so one bad step never takes the process down.
    for (;;) {
        const bool open = take_commands(!scheduler_.has_work());
        for (inbox_command & c : commands_) {
            if (c.what == inbox_command::kind::submit) {
                admit(std::move(c.request));
            } else if (active_.count(c.id)) {
                finish_all(*active_[c.id], engine_finish::abort);
                scheduler_.abort(c.id);
                active_.erase(c.id);
            }
        }
        publish(); // admission failures and aborts answer before the step runs
        if (!open) break;
        if (scheduler_.has_work()) {
            try {
                step();
            } catch (const std::exception & e) {
                const std::string message = std::string("engine step failed: ") + e.what();
                for (auto & [id, a] : active_) {
                    finish_all(*a, engine_finish::error, "engine_fault", message);
                    scheduler_.abort(id);
                }
                active_.clear();
            }
        }
        publish();
    }
    // Closing: every live request ends with an abort record.
    for (auto & [id, a] : active_) {
        finish_all(*a, engine_finish::abort);
        scheduler_.abort(id);
    }
    active_.clear();
    publish();
}

void engine_impl::publish_stats() {
    const sched::scheduler_stats s = scheduler_.stats();
    std::lock_guard<std::mutex> lock(stats_mutex_);
    stats_.running = s.n_running;
    stats_.waiting = s.n_waiting;
    stats_.kv_usage = s.kv_usage;
    stats_.kv_blocks_total = s.n_blocks_total;
    stats_.kv_blocks_free = s.n_blocks_free;
    stats_.prefix_cache_queries = s.n_prefix_queries;
    stats_.prefix_cache_hits = s.n_prefix_hits;
    stats_.preemptions = s.n_preemptions;
    stats_.prompt_tokens = n_prompt_tokens_;
    stats_.generation_tokens = n_generation_tokens_;
    stats_.tokens_computed = n_tokens_computed_;
    stats_.steps = n_steps_;
}

// ---- public facade ----

engine::engine(std::shared_ptr<const model> m, const engine_params & params, std::function<void()> notify)
    : impl_(std::make_unique<engine_impl>(std::move(m), params, std::move(notify))) {}
engine::~engine() { close(); }
void engine::submit(engine_request request) { impl_->submit(std::move(request)); }
void engine::abort(uint64_t id) { impl_->abort(id); }
std::vector<engine_record> engine::drain() { return impl_->drain(); }
engine_stats engine::stats() const { return impl_->stats(); }
void engine::close() { impl_->close(); }
void engine::request_close() { impl_->request_close(); }
int32_t engine::max_model_len() const { return impl_->max_model_len(); }
int32_t engine::kv_blocks_total() const { return impl_->kv_blocks_total(); }

} // namespace tmill
