// THE engine API the addon uses (in the spirit of llama.h): parameter structs with *_default_params(),
// create / submit / abort / drain / stats / close. One engine thread per engine owns every piece of
// mutable engine state (scheduler, block pool, sequences, samplers); these calls only exchange messages
// with it, so they never block the caller on model work.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "decode/repetition-detector.h"
#include "model/model.h"
#include "sample/sampling-params.h"

namespace tmill {

enum class sched_policy_kind { fcfs, priority };

struct engine_params {
    size_t kv_cache_memory = size_t(256) << 20;  // bytes for K and V of every layer
    int32_t max_num_seqs = 64;                   // sequences per step
    int32_t max_num_batched_tokens = 512;        // tokens per step (prefill chunks + decode tokens)
    sched_policy_kind policy = sched_policy_kind::fcfs;
    int32_t n_threads = 0;                       // kernel threads incl. the engine thread; 0 = hardware
    bool enable_prefix_caching = true;
    int32_t max_logprobs = 20;                   // most top_logprobs a request may ask for
    int32_t max_model_len = 0;                   // 0 = the model's training context
    bool has_seed = false;                       // engine-wide seed (vLLM's --seed): requests without a
    int64_t seed = 0;                            // seed draw theirs from a stream seeded with it
};

engine_params engine_default_params();

enum class engine_finish { none, stop, length, abort, repetition, error };
const char * engine_finish_name(engine_finish r);

// One request as the engine runs it. Converted once on the JS thread; plain data from then on.
struct engine_request {
    uint64_t id = 0;                       // unique among live requests (the caller allocates ids)
    std::vector<int32_t> prompt;           // (n_prompt) token ids, non-empty
    int32_t n = 1;                         // choices sampled from one prompt (KV shared copy-on-write)
    int32_t max_tokens = -1;               // -1 = until EOS or the context is full
    int64_t priority = 0;
    std::string cache_salt;
    sampling_params sampling;
    std::vector<std::string> stop;         // stop strings
    bool include_stop_str_in_output = false;
    bool ignore_eos = false;
    bool skip_special_tokens = true;
    bool spaces_between_special_tokens = true;
    repetition_params repetition;          // vLLM's repetition_detection; off by default
    int32_t prompt_logprobs = -1;          // -1 off; N ≥ 0: each prompt token's logprob plus the top N
    // Beam search (vLLM's use_beam_search): n is the width; only temperature, ignore_eos,
    // include_stop_str_in_output, skip_special_tokens and length_penalty matter then.
    bool use_beam_search = false;
    float length_penalty = 1.0f;           // score = cum_logprob / len^length_penalty
};

struct logprob_entry {
    int32_t token = -1;
    float logprob = 0.0f;
    int32_t rank = 0;
};

// What the engine tells the caller about one choice of a request since the last drain. Each choice
// ends with one record whose finish != none; the request's last such record has done = true, and nothing
// follows it. (n = 1: the finish record is the done record.)
struct engine_record {
    uint64_t id = 0;
    int32_t seq = 0;                       // choice index
    bool done = false;                     // the request is over (every choice finished)
    std::vector<int32_t> tokens;           // new output token ids
    std::string text;                      // new text (UTF-8 complete, stop strings held back / cut)
    // logprobs: per new token, the chosen token then n_top entries (flattened, n_top + 1 per token)
    std::vector<logprob_entry> logprobs;
    int32_t n_top_logprobs = 0;
    // prompt logprobs (with the first token's record): per prompt position 1.., the prompt token then
    // n_top_prompt_logprobs entries (flattened, n_top_prompt_logprobs + 1 per position); -1 = none in this
    // record (0 with no entries: asked for, with top 0, of a one-token prompt)
    std::vector<logprob_entry> prompt_logprobs;
    int32_t n_top_prompt_logprobs = -1;
    engine_finish finish = engine_finish::none;
    std::string stop_string;               // stop_reason when a stop string matched
    int32_t stop_token = -1;               // stop_reason when a stop token id matched
    std::string error_code, error_message; // finish == error
    int32_t n_prompt_tokens = 0, n_completion_tokens = 0, n_cached_tokens = 0;  // usage of this choice, with finish
    std::optional<double> cum_logprob;     // beam search: the beam's cumulative logprob, with finish
};

struct engine_stats {
    int32_t running = 0, waiting = 0;
    double kv_usage = 0;
    int32_t kv_blocks_total = 0, kv_blocks_free = 0;
    uint64_t prefix_cache_queries = 0, prefix_cache_hits = 0, preemptions = 0;
    uint64_t prompt_tokens = 0, generation_tokens = 0;
    uint64_t tokens_computed = 0;    // token positions run through the forward pass (prompt + decode)
    uint64_t steps = 0;
};

class engine_impl;

class engine {
public:
    // Allocates the KV pool and starts the engine thread. `notify` is called on the engine thread when
    // the outbox goes from empty to non-empty (the caller then calls drain()). Throws tmill::error.
    engine(std::shared_ptr<const model> m, const engine_params & params, std::function<void()> notify);
    ~engine();   // close()s
    engine(const engine &) = delete;
    engine & operator=(const engine &) = delete;

    // Queues a request; validation failures come back as its finish record (error). Throws disposed
    // after close().
    void submit(engine_request request);
    // Aborts a request (waiting or running); idempotent, unknown ids are ignored.
    void abort(uint64_t id);
    // Moves out every pending record.
    std::vector<engine_record> drain();
    engine_stats stats() const;
    // Stops the thread (aborting what runs: each gets its abort record) and frees the KV pool. Blocks
    // until the thread has exited; twice is fine.
    void close();
    // close()'s first half, which does not block: the thread stops at its next step boundary, and calls
    // other than close() and drain() fail as after close(). The caller that cannot block here (the
    // addon's JS thread) asks for it at once and leaves close()'s wait to a worker, so a request cannot
    // run on for as long as that worker waits to be scheduled.
    void request_close();

    int32_t max_model_len() const;
    int32_t kv_blocks_total() const;

private:
    std::unique_ptr<engine_impl> impl_;
};

} // namespace tmill
