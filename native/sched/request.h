// A request as the scheduler sees it: one or more sequences (n > 1, beams) over a shared prompt.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kv/block-hash.h"
#include "kv/block-table.h"

namespace tmill::sched {

enum class request_status { waiting, running };

// What the engine submits. Sampling and stop conditions are not the scheduler's business.
struct request_params {
    uint64_t id = 0;                 // unique among live requests
    std::vector<int32_t> prompt;     // (n_prompt) token ids, n_prompt >= 1
    int64_t priority = 0;            // lower runs first under the priority policy
    std::string cache_salt;          // salts the prefix-cache chain; empty = unsalted
    int32_t n_seqs = 1;              // sequences forked from the prompt once it is computed (n)
    int32_t n_max_tokens = 0;        // reserve hint for generated tokens (0 = none)
    bool skip_prefix_cache = false;  // compute every prompt position (prompt logprobs need their logits)
    bool external_tokens = false;    // beam search: the engine appends tokens itself (append_token)
};

struct sequence {
    std::vector<int32_t> tokens;         // (n_tokens) prompt + generated token ids
    int32_t n_computed = 0;              // tokens whose KV is written; n_computed < n_tokens while live,
                                         // except external_tokens sequences awaiting append_token
    kv::block_table blocks;              // (blocks_for(n_computed)) physical ids
    std::vector<kv::block_hash> hashes;  // (n leading full blocks already hashed) chain hashes
    bool finished = false;               // freed by the engine (finish_sequence); keeps its index
    int32_t plan_entry = -1;             // scratch for schedule(): entry index in the plan being built
};

struct request {
    uint64_t id = 0;
    int64_t priority = 0;
    uint64_t arrival = 0;                // submission counter: ties in priority go to the earlier one
    kv::block_hash root;                 // hash_root(cache_salt)
    int32_t n_prompt = 0;
    int32_t n_seqs_target = 1;           // n
    bool forked = false;                 // the prompt was computed once and forked n ways
    request_status status = request_status::waiting;
    int32_t n_cached_tokens = -1;        // prefix-cache hit at first admission (-1 until admitted)
    bool skip_prefix_cache = false;      // never look up the prefix cache for this request
    bool external_tokens = false;        // logits rows without samples; tokens come via append_token
    std::vector<sequence> seqs;          // seqs[0] exists from the start; forks append

    int32_t n_live_seqs() const {
        int32_t n = 0;
        for (const auto & s : seqs) n += s.finished ? 0 : 1;
        return n;
    }
};

// Scheduling order: true when a should run before b under the priority policy.
inline bool priority_before(const request & a, const request & b) {
    return a.priority != b.priority ? a.priority < b.priority : a.arrival < b.arrival;
}

} // namespace tmill::sched
