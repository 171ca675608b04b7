// What one forward pass runs, as built by scheduler::schedule() and consumed by scheduler::commit().
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tmill::sched {

struct request;
struct sequence;

// One scheduled sequence: compute positions [pos_start, pos_start + n_tokens).
struct plan_entry {
    uint64_t request_id = 0;
    int32_t seq_index = 0;          // index into the request's sequences (0 unless n > 1 / beams)
    int32_t pos_start = 0;          // first position to compute (== prefix-cache hit on admission)
    int32_t n_tokens = 0;           // span length, >= 1
    int32_t token_offset = 0;       // token ids are plan.token_ids[token_offset, + n_tokens)
    int32_t block_offset = 0;       // block table is plan.block_ids[block_offset, + n_blocks)
    int32_t n_blocks = 0;           // covers every position < pos_start + n_tokens
    bool need_logits = false;       // the span ends at the last known token: sample from its row
    int32_t n_samples = 0;          // tokens commit() expects for this entry: 0, 1, or n (first fork)
    int32_t n_cached_tokens = -1;   // prefix-cache hit when this entry admits the sequence, else -1
    int32_t copy_src = -1, copy_dst = -1; // copy-on-write of the partial last block, -1 when none
    // scheduler-internal links, valid until commit
    request * req = nullptr;
    sequence * seq = nullptr;
    bool dropped = false;
};

// Copy block src → dst (all slots) before running the pass; the caller owns KV memory.
struct block_copy {
    int32_t src = 0;
    int32_t dst = 0;
};

struct rejected_request {
    uint64_t request_id = 0;
    std::string message;            // why it can never run again (it outgrew the whole KV pool)
};

// Pool operations recorded while planning on the shadow pool and replayed by commit() in order.
enum class plan_op_kind { preempt, admit, reject, hit, alloc, cow };
struct plan_op {
    plan_op_kind kind;
    request * req = nullptr;
    sequence * seq = nullptr;
    int32_t block = -1;             // hit: the cached block; alloc/cow: the block the shadow handed out
};

// NOTE(step-plan): a plan is valid only for the scheduler state it was built from: commit() it
// before any submit/abort/finish/fork (the scheduler checks an epoch and throws otherwise).
struct step_plan {
    std::vector<plan_entry> entries;        // (n_seqs) in batch order
    std::vector<int32_t> token_ids;         // (n_batched_tokens) spans of every entry, concatenated
    std::vector<int32_t> block_ids;         // block tables of every entry, concatenated
    std::vector<block_copy> copies;         // do these before the forward pass
    std::vector<uint64_t> preempted;        // requests sent back to waiting (recompute later)
    std::vector<rejected_request> rejected; // finished with an error; commit() removes them
    int32_t n_batched_tokens = 0;
    int32_t n_samples = 0;                  // total sampled tokens commit() expects
    std::vector<plan_op> ops;               // internal
    uint64_t epoch = 0;                     // internal

    void clear() {
        entries.clear(); token_ids.clear(); block_ids.clear(); copies.clear(); preempted.clear();
        rejected.clear(); ops.clear();
        n_batched_tokens = 0;
        n_samples = 0;
    }
    bool empty() const { return entries.empty() && rejected.empty() && preempted.empty(); }
};

} // namespace tmill::sched
