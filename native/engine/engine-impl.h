// The engine's private state. The engine thread is the only one that touches anything below
// "engine-thread state"; the inbox, outbox and stats snapshot are the only things shared with callers.
#pragma once

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "base/thread-pool.h"
#include "engine/engine.h"
#include "engine/output-stream.h"
#include "model/forward.h"
#include "model/kv-storage.h"
#include "sample/beam-search.h"
#include "sample/sampler.h"
#include "sched/scheduler.h"

namespace tmill {

// One choice of a request: its own random stream, detokenizer, stop state and output.
struct choice_state {
    std::unique_ptr<sampler> smp;
    std::unique_ptr<output_stream> out;
    std::vector<int32_t> output;       // (n_output) generated token ids, capacity max_tokens
    bool finished = false;
};

// Beam search state of a use_beam_search request (driven in engine-beam.cpp).
struct beam_state {
    std::unique_ptr<beam_search> search;
    int32_t n_top = 0;                     // candidates per beam: min(2·width, n_vocab)
    int32_t n_steps = 0;                   // beam steps done = output length of every live beam
    std::vector<int32_t> seq_of;           // (live beams) scheduler sequence of search->live()[i]
    std::vector<token_logprob> tops;       // (width, n_top) candidates of live beam i at i·n_top
    std::vector<uint8_t> ready;            // (width) beam i's row was scored since the last beam step
    // scratch of one beam step, sized (width)
    std::vector<const token_logprob *> top_ptrs;
    std::vector<int32_t> n_tops, next_seq_of;
    std::vector<uint8_t> parent_used;
};

// Per-request state owned by the engine thread.
struct active_request {
    engine_request req;
    std::vector<choice_state> choices; // (n) indexed like the scheduler's sequences
    int32_t n_live = 0;                // choices not finished
    int32_t max_tokens = 0;            // effective cap: min(request, max_model_len - n_prompt)
    int32_t n_cached_tokens = 0;
    // prompt logprobs: entries for prompt positions 1..n_prompt_logprobs_done (recompute after a
    // preemption skips what is done), sent with the first sampled token
    std::vector<logprob_entry> prompt_logprobs;   // ((n_prompt - 1) × (n_top + 1))
    int32_t n_prompt_logprobs_done = 0;
    bool prompt_logprobs_sent = false;
    std::unique_ptr<beam_state> beam;  // use_beam_search requests only
};

struct inbox_command {
    enum class kind { submit, abort } what = kind::submit;
    engine_request request;            // submit
    uint64_t id = 0;                   // abort
};

class engine_impl {
public:
    engine_impl(std::shared_ptr<const model> m, const engine_params & params, std::function<void()> notify);
    ~engine_impl();

    void submit(engine_request request);
    void abort(uint64_t id);
    std::vector<engine_record> drain();
    engine_stats stats() const;
    void close();
    void request_close();

    int32_t max_model_len() const { return max_model_len_; }
    int32_t kv_blocks_total() const { return kv_.n_blocks(); }

private:
    // engine thread
    void run();
    bool take_commands(bool block);
    void admit(engine_request && request);
    void step();
    // Queues a record for the caller; publish() hands it over.
    void emit(engine_record && rec);
    // Marks choice `seq` finished with `reason` and fills rec's finish fields; true when it was the last.
    bool finish_choice(active_request & a, int32_t seq, engine_finish reason, engine_record & rec);
    // Ends every live choice of `a` with `reason` (abort, close, error), emitting one record each; an
    // error names its code and message on every record.
    void finish_all(active_request & a, engine_finish reason, const char * error_code = "", const std::string & error_message = {});
    void sample_entry(active_request & a, int32_t seq, const float * logits);
    // Prompt logprobs for the output rows [first, first + count) listed in prompt_rows_.
    void score_prompt_rows(int32_t first, int32_t count);
    void fail(uint64_t id, const char * code, const std::string & message);
    // Beam search (engine-beam.cpp): state at admission, one live beam's logits row, and the beam step
    // once every live beam has its row (true when the search ended and its records are in records_).
    void admit_beam(active_request & a);
    void beam_score_row(active_request & a, int32_t seq, const float * logits);
    bool beam_advance(active_request & a);
    void beam_finish(active_request & a);
    void publish_stats();
    // Publishes the stats, then moves the queued records to the outbox (notifying once): a caller woken
    // by a record already sees the state it reports (a finished or aborted request no longer counted).
    void publish();

    std::shared_ptr<const model> model_;
    engine_params params_;
    int32_t max_model_len_ = 0;
    std::function<void()> notify_;

    // shared with callers
    mutable std::mutex inbox_mutex_;
    std::condition_variable inbox_cv_;
    std::deque<inbox_command> inbox_;
    bool closing_ = false;
    mutable std::mutex outbox_mutex_;
    std::vector<engine_record> outbox_;
    mutable std::mutex stats_mutex_;
    engine_stats stats_;
    std::thread thread_;
    bool closed_ = false;

    // engine-thread state
    kv_storage kv_;
    thread_pool pool_;
    llama_forward forward_;
    sched::scheduler scheduler_;
    sampler_workspace workspace_;
    sched::step_plan plan_;
    rng seed_stream_;                              // seeds of requests that bring none
    std::unordered_map<uint64_t, std::unique_ptr<active_request>> active_;
    std::vector<inbox_command> commands_;          // drained inbox, reused
    std::vector<int32_t> positions_;               // (max_num_batched_tokens)
    std::vector<int32_t> seq_index_;               // (max_num_batched_tokens)
    std::vector<seq_blocks> seqs_;                 // (max_num_seqs)
    std::vector<int32_t> output_rows_;             // (max_num_seqs)
    std::vector<float> logits_;                    // (max_num_seqs, n_vocab)
    std::vector<int32_t> sampled_;                 // (plan.n_samples)
    std::vector<engine_record> records_;           // (sequences sampled this step) before emit
    std::vector<engine_record> pending_;           // emitted, not yet published
    std::vector<float> row_copy_;                  // (n_vocab) one logits row, copied per choice of a fork
    struct prompt_row { active_request * a; int32_t position; };
    std::vector<prompt_row> prompt_rows_;          // (output rows after the sampled ones) prompt-logprob rows
    std::vector<token_logprob> top_scratch_;       // (n_vocab) top entries of one prompt position
    std::vector<active_request *> beam_touched_;   // (max_num_seqs) beam requests scored this step
    uint64_t n_prompt_tokens_ = 0, n_generation_tokens_ = 0, n_tokens_computed_ = 0, n_steps_ = 0;
};

} // namespace tmill
