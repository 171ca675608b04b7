// Continuous batching over the paged KV pool: schedule() builds a step_plan without side effects;
// the engine runs it (block copies, forward pass, sampling) and calls commit(plan, sampled tokens).
//
// Engine loop (one engine thread owns the scheduler; no locks):
//     submit()/abort() between steps
//     schedule(plan);  report plan.rejected as errors
//     do plan.copies; forward over plan.entries; sample plan.n_samples tokens, in entry order,
//     n_samples per entry from that entry's last-token logits
//     commit(plan, sampled);  then per sequence: stop checks → finish_sequence()/finish_request()
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "kv/block-pool.h"
#include "sched/request-queue.h"
#include "sched/request.h"
#include "sched/step-plan.h"

namespace tmill::sched {

struct scheduler_params {
    int32_t n_blocks = 0;                 // KV pool size (the engine derives it from kvCacheMemory)
    int32_t block_size = kv::default_block_size;
    int32_t max_num_seqs = 64;            // sequences per step (and live sequences admitted)
    int32_t max_num_batched_tokens = 2048;// tokens per step; prompts longer than this are chunked
    sched_policy policy = sched_policy::fcfs;
    bool enable_prefix_caching = true;
};

scheduler_params scheduler_default_params();

struct scheduler_stats {
    int32_t n_running = 0;                // requests
    int32_t n_waiting = 0;
    double kv_usage = 0;                  // 0..1, blocks in use / total
    int32_t n_blocks_total = 0;
    int32_t n_blocks_free = 0;            // cached-but-free blocks count as free
    uint64_t n_prefix_queries = 0;        // tokens looked up in the prefix cache
    uint64_t n_prefix_hits = 0;           // tokens found
    uint64_t n_preemptions = 0;
};

// NOTE(scheduler): there is no prefill or decode phase; each sequence only has n_computed catching
// up with its n_tokens. A step first advances running requests (in running order), preempting from
// the back of the running list when blocks run out, then admits waiting requests in queue order.
class scheduler {
public:
    // pre: n_blocks >= 1, block_size >= 1, max_num_seqs >= 1, max_num_batched_tokens >= 1.
    explicit scheduler(const scheduler_params & params);

    // Queues a request. pre: id not live, prompt non-empty, 1 <= n_seqs <= max_num_seqs, and the prompt
    // fits the whole pool (refusal_for_prompt() is empty); throws invalid_argument otherwise.
    void submit(request_params params);
    // Why a prompt of n_prompt tokens can never run (it needs more blocks than the whole pool has, so no
    // preemption can make room), or "" when it fits. The engine asks before submit() and refuses such a
    // request at once: queued, it would wait behind every request blocked ahead of it.
    std::string refusal_for_prompt(int32_t n_prompt) const;
    // Frees all blocks of a waiting or running request and forgets it; false when unknown (idempotent).
    bool abort(uint64_t id);
    // The engine finished the request (stop, length, ...): same as abort, full blocks stay cached.
    bool finish_request(uint64_t id) { return abort(id); }
    // Finishes one sequence (a choice that stopped, a dropped beam); the request goes away with its
    // last live sequence (returns true then). pre: the request is live and seq_index is live.
    bool finish_sequence(uint64_t id, int32_t seq_index);
    // Forks a running sequence (beam search): the child shares every block copy-on-write and its
    // tokens; returns the child's index (a finished sequence's slot is reused, so a long beam search
    // keeps at most its live count of slots). pre: request running, seq live, between steps.
    int32_t fork_sequence(uint64_t id, int32_t seq_index);
    // Replaces the last (not yet computed) token of a sequence, e.g. a beam taking another candidate
    // after fork. pre: the sequence has a token past n_computed.
    void set_last_token(uint64_t id, int32_t seq_index, int32_t token);
    // Appends the next token of an external_tokens sequence whose tokens are all computed (its
    // logits row was taken in the last step). pre: request external_tokens, n_computed == n_tokens.
    void append_token(uint64_t id, int32_t seq_index, int32_t token);

    // Builds the next step into plan (cleared first; reuse one plan to avoid allocation). No
    // observable state changes. An empty plan means nothing can run now.
    void schedule(step_plan & plan);
    // Applies the plan: KV bookkeeping, n_computed, sampled tokens (plan.n_samples of them, in entry
    // order), forks of n > 1 requests, prefix-cache registration of new full blocks.
    // pre: plan came from the last schedule() and nothing changed since.
    void commit(const step_plan & plan, const int32_t * sampled, int32_t n_sampled);

    const request * find(uint64_t id) const;
    scheduler_stats stats() const;
    const kv::block_pool & pool() const { return pool_; }
    const scheduler_params & params() const { return params_; }
    bool has_work() const { return !requests_.empty(); }

private:
    enum class seq_result { scheduled, no_budget, no_blocks };
    struct plan_state;
    seq_result plan_sequence(plan_state & st, request * r, int32_t seq_index, step_plan & plan);
    void plan_preempt(plan_state & st, request * victim, step_plan & plan);
    int32_t blocks_needed_alone(const request & r) const;
    std::string refusal(int32_t n_blocks_needed) const;
    void running_insert(request * r);
    void running_remove(const request * r);
    void release_blocks(request & r);
    void cache_full_blocks(const request & r, sequence & s);

    scheduler_params params_;
    kv::block_pool pool_;
    kv::block_pool shadow_;                          // planning copy of pool_ (see block_pool::shadow_from)
    std::unique_ptr<request_queue> waiting_;
    std::vector<request *> running_;                 // policy order; preemption victims come from the back
    std::unordered_map<uint64_t, std::unique_ptr<request>> requests_;
    std::vector<int32_t> scratch_blocks_;            // (max blocks per lookup) prefix hit ids
    std::vector<kv::block_hash> scratch_hashes_;     // (max blocks per lookup)
    uint64_t n_arrivals_ = 0;
    uint64_t epoch_ = 0;
    uint64_t n_prefix_queries_ = 0, n_prefix_hits_ = 0, n_preemptions_ = 0;
};

} // namespace tmill::sched
