// Test helpers for the KV pool and scheduler: a fake model with a fake paged KV store, whose next
// token is a deterministic function of the full token history READ BACK THROUGH THE BLOCK TABLE.
// A wrong block table, a bad prefix hit or a missing copy-on-write therefore changes the output
// (and is also reported directly as a KV mismatch).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "base/error.h"
#include "check.h"
#include "sched/scheduler.h"

namespace tm_test {

inline uint64_t fake_mix(uint64_t x) {
    x ^= x >> 31; x *= 0x7fb5d329728ea185ULL; x ^= x >> 27; x *= 0x81dadef4bc2dd44dULL; x ^= x >> 33;
    return x;
}

constexpr int32_t fake_vocab = 997;

// The "model": next token from the whole history.
inline int32_t fake_next(const std::vector<int32_t> & history) {
    uint64_t h = 0x1234567;
    for (int32_t t : history) h = fake_mix(h ^ static_cast<uint64_t>(t));
    return static_cast<int32_t>(h % fake_vocab);
}

// Reference stream: what a request must generate, computed without any scheduler. `first_offset`
// shifts the first sampled token (choice j of an n > 1 request samples fake_next(prompt) + j).
inline std::vector<int32_t> reference_output(std::vector<int32_t> history, int32_t n_max, int32_t first_offset = 0) {
    std::vector<int32_t> out;
    for (int32_t i = 0; i < n_max; ++i) {
        int32_t t = fake_next(history);
        if (i == 0) t = (t + first_offset) % fake_vocab;
        out.push_back(t);
        history.push_back(t);
    }
    return out;
}

struct fake_model {
    int32_t block_size;
    std::vector<int64_t> kv;  // (n_blocks, block_size) slot = (pos << 32) | token, -1 when never written
    bool kv_ok = true;

    fake_model(int32_t n_blocks, int32_t bs) : block_size(bs), kv(static_cast<size_t>(n_blocks) * bs, -1) {}

    // Runs one plan: block copies, KV writes of every span, then sampling from the KV read-back. Like
    // the engine's forward pass, it reads the batch as token_ids front to back, entry after entry (a
    // span out of place is a KV mismatch), and checks that token_offset agrees.
    std::vector<int32_t> run(const tmill::sched::step_plan & plan) {
        for (const auto & c : plan.copies) {
            for (int32_t i = 0; i < block_size; ++i) kv[c.dst * block_size + i] = kv[c.src * block_size + i];
        }
        if (plan.token_ids.size() != static_cast<size_t>(plan.n_batched_tokens)) kv_ok = false;
        size_t row = 0;
        for (const auto & e : plan.entries) {
            const int32_t * table = plan.block_ids.data() + e.block_offset;
            if (static_cast<size_t>(e.token_offset) != row) kv_ok = false;
            for (int32_t i = 0; i < e.n_tokens; ++i, ++row) {
                const int32_t pos = e.pos_start + i;
                if (pos / block_size >= e.n_blocks || row >= plan.token_ids.size()) { kv_ok = false; continue; }
                kv[table[pos / block_size] * block_size + pos % block_size] =
                    (static_cast<int64_t>(pos) << 32) | static_cast<uint32_t>(plan.token_ids[row]);
            }
        }
        std::vector<int32_t> sampled;
        for (const auto & e : plan.entries) {
            if (!e.need_logits) continue;
            const int32_t * table = plan.block_ids.data() + e.block_offset;
            std::vector<int32_t> history;
            for (int32_t pos = 0; pos < e.pos_start + e.n_tokens; ++pos) {
                const int64_t slot = kv[table[pos / block_size] * block_size + pos % block_size];
                if (slot < 0 || (slot >> 32) != pos) kv_ok = false;
                history.push_back(static_cast<int32_t>(slot & 0xffffffff));
            }
            const int32_t t = fake_next(history);
            for (int32_t j = 0; j < e.n_samples; ++j) sampled.push_back((t + j) % fake_vocab);
        }
        return sampled;
    }
};

// Drives a scheduler like the engine would: schedule → fake forward → commit → stop at max tokens.
struct driver {
    tmill::sched::scheduler & s;
    fake_model model;
    std::map<uint64_t, int32_t> max_tokens;                            // per request
    std::map<std::pair<uint64_t, int32_t>, std::vector<int32_t>> out;  // (id, seq) → generated tokens
    std::map<uint64_t, std::string> errors;
    std::map<uint64_t, int32_t> cached;                                // cachedTokens at finish
    std::vector<uint64_t> finish_order;
    bool bounds_ok = true;
    int32_t max_entries_seen = 0, max_batched_seen = 0;
    int64_t n_steps = 0, n_tokens_computed = 0;

    explicit driver(tmill::sched::scheduler & sched)
        : s(sched), model(sched.params().n_blocks, sched.params().block_size) {}

    void submit(uint64_t id, std::vector<int32_t> prompt, int32_t n_max, int64_t priority = 0,
                std::string salt = "", int32_t n = 1) {
        tmill::sched::request_params p;
        p.id = id;
        p.prompt = std::move(prompt);
        p.priority = priority;
        p.cache_salt = std::move(salt);
        p.n_seqs = n;
        p.n_max_tokens = n_max;
        max_tokens[id] = n_max;
        s.submit(std::move(p));
    }

    // One step; returns false when the plan was empty.
    bool step() {
        tmill::sched::step_plan plan;
        s.schedule(plan);
        for (const auto & rej : plan.rejected) errors[rej.request_id] = rej.message;
        const auto & prm = s.params();
        if (static_cast<int32_t>(plan.entries.size()) > prm.max_num_seqs) bounds_ok = false;
        if (plan.n_batched_tokens > prm.max_num_batched_tokens) bounds_ok = false;
        if (plan.entries.size() > static_cast<size_t>(max_entries_seen)) max_entries_seen = static_cast<int32_t>(plan.entries.size());
        if (plan.n_batched_tokens > max_batched_seen) max_batched_seen = plan.n_batched_tokens;
        std::vector<int32_t> sampled = model.run(plan);
        s.commit(plan, sampled.data(), static_cast<int32_t>(sampled.size()));
        ++n_steps;
        n_tokens_computed += plan.n_batched_tokens;
        std::vector<uint64_t> ids;
        for (const auto & e : plan.entries) ids.push_back(e.request_id);
        for (uint64_t id : ids) {
            const tmill::sched::request * r = s.find(id);
            if (!r) continue;
            for (int32_t si = 0; si < static_cast<int32_t>(r->seqs.size()); ++si) {
                const auto & seq = r->seqs[si];
                if (seq.finished) continue;
                const int32_t n_gen = static_cast<int32_t>(seq.tokens.size()) - r->n_prompt;
                if (n_gen >= max_tokens[id]) {
                    out[{id, si}] = std::vector<int32_t>(seq.tokens.begin() + r->n_prompt, seq.tokens.end());
                    cached[id] = r->n_cached_tokens;
                    const bool gone = s.finish_sequence(id, si);
                    if (gone) { finish_order.push_back(id); break; }
                    r = s.find(id);
                }
            }
        }
        return !plan.empty();
    }

    // Steps until nothing is left (or a step limit, which a test treats as a deadlock).
    bool run(int64_t max_steps = 100000) {
        while (s.has_work()) {
            if (n_steps >= max_steps) return false;
            step();
        }
        return true;
    }
};

inline tmill::sched::scheduler_params make_params(int32_t n_blocks, int32_t max_num_seqs = 64,
                                               int32_t max_batched = 2048,
                                               tmill::sched::sched_policy policy = tmill::sched::sched_policy::fcfs) {
    tmill::sched::scheduler_params p = tmill::sched::scheduler_default_params();
    p.n_blocks = n_blocks;
    p.block_size = 16;
    p.max_num_seqs = max_num_seqs;
    p.max_num_batched_tokens = max_batched;
    p.policy = policy;
    return p;
}

// Prompt i of length n_tokens with distinct content per seed.
inline std::vector<int32_t> make_prompt(uint64_t seed, int32_t n_tokens) {
    std::vector<int32_t> p;
    for (int32_t i = 0; i < n_tokens; ++i) p.push_back(static_cast<int32_t>(fake_mix(seed * 1000003 + i) % fake_vocab));
    return p;
}

} // namespace tm_test
