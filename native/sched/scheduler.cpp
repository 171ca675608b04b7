#include "sched/scheduler.h"

#include <algorithm>
#include <string>

#include "base/error.h"
#include "kv/block-table.h"

namespace tmill::sched {

scheduler_params scheduler_default_params() { return scheduler_params{}; }

// Planning state of one schedule() call.
struct scheduler::plan_state {
    int32_t budget = 0;          // tokens left in this step
    int32_t n_seqs = 0;          // entries scheduled (not dropped)
    size_t live_end = 0;         // running_[0, live_end) are not preempted by this plan
    bool preempted_any = false;
};

scheduler::scheduler(const scheduler_params & params)
    : params_(params), pool_(params.n_blocks, params.block_size), shadow_(params.n_blocks, params.block_size),
      waiting_(make_request_queue(params.policy)) {
    TM_CHECK(params.max_num_seqs >= 1, invalid_argument, "scheduler: max_num_seqs must be >= 1");
    TM_CHECK(params.max_num_batched_tokens >= 1, invalid_argument, "scheduler: max_num_batched_tokens must be >= 1");
    shadow_.shadow_from(pool_);
    scratch_blocks_.resize(static_cast<size_t>(params.n_blocks));
    scratch_hashes_.resize(static_cast<size_t>(params.n_blocks));
    running_.reserve(static_cast<size_t>(params.max_num_seqs));
}

// ---------------------------------------------------------------------------------------------
// requests

void scheduler::submit(request_params p) {
    TM_CHECK(!p.prompt.empty(), invalid_argument, "scheduler: empty prompt");
    TM_CHECK(p.n_seqs >= 1 && p.n_seqs <= params_.max_num_seqs, invalid_argument,
             "scheduler: n must be in [1, max_num_seqs], got " + std::to_string(p.n_seqs));
    TM_CHECK(p.n_max_tokens >= 0, invalid_argument, "scheduler: negative n_max_tokens");
    TM_CHECK(requests_.find(p.id) == requests_.end(), invalid_argument,
             "scheduler: request id " + std::to_string(p.id) + " is already live");
    const std::string refusal = refusal_for_prompt(static_cast<int32_t>(p.prompt.size()));
    TM_CHECK(refusal.empty(), invalid_argument, refusal);
    auto r = std::make_unique<request>();
    r->id = p.id;
    r->priority = p.priority;
    r->arrival = n_arrivals_++;
    r->root = kv::hash_root(p.cache_salt);
    r->skip_prefix_cache = p.skip_prefix_cache;
    r->external_tokens = p.external_tokens;
    r->n_prompt = static_cast<int32_t>(p.prompt.size());
    r->n_seqs_target = p.n_seqs;
    r->seqs.reserve(static_cast<size_t>(p.n_seqs));
    r->seqs.emplace_back();
    sequence & s = r->seqs[0];
    s.tokens = std::move(p.prompt);
    s.tokens.reserve(s.tokens.size() + static_cast<size_t>(p.n_max_tokens) + 1);
    waiting_->push(r.get());
    requests_.emplace(p.id, std::move(r));
    ++epoch_;
}

const request * scheduler::find(uint64_t id) const {
    auto it = requests_.find(id);
    return it == requests_.end() ? nullptr : it->second.get();
}

void scheduler::release_blocks(request & r) {
    for (auto & s : r.seqs) {
        kv::table_free(pool_, s.blocks);
        s.n_computed = 0;
        s.hashes.clear();
    }
}

bool scheduler::abort(uint64_t id) {
    auto it = requests_.find(id);
    if (it == requests_.end()) return false;
    request * r = it->second.get();
    if (r->status == request_status::waiting) waiting_->remove(r); else running_remove(r);
    release_blocks(*r);
    requests_.erase(it);
    ++epoch_;
    return true;
}

bool scheduler::finish_sequence(uint64_t id, int32_t seq_index) {
    auto it = requests_.find(id);
    TM_CHECK(it != requests_.end(), invalid_argument, "scheduler: unknown request " + std::to_string(id));
    request & r = *it->second;
    TM_CHECK(seq_index >= 0 && seq_index < static_cast<int32_t>(r.seqs.size()) && !r.seqs[seq_index].finished,
             invalid_argument, "scheduler: bad sequence index " + std::to_string(seq_index));
    sequence & s = r.seqs[seq_index];
    kv::table_free(pool_, s.blocks);
    s.finished = true;
    ++epoch_;
    if (r.n_live_seqs() == 0) return abort(id);
    return false;
}

int32_t scheduler::fork_sequence(uint64_t id, int32_t seq_index) {
    auto it = requests_.find(id);
    TM_CHECK(it != requests_.end(), invalid_argument, "scheduler: unknown request " + std::to_string(id));
    request & r = *it->second;
    TM_CHECK(r.status == request_status::running, invalid_argument, "scheduler: fork of a request that is not running");
    TM_CHECK(seq_index >= 0 && seq_index < static_cast<int32_t>(r.seqs.size()) && !r.seqs[seq_index].finished,
             invalid_argument, "scheduler: bad sequence index " + std::to_string(seq_index));
    int32_t slot = -1; // reuse a finished slot (its blocks are already freed)
    for (int32_t i = 0; i < static_cast<int32_t>(r.seqs.size()) && slot < 0; ++i) slot = r.seqs[i].finished ? i : -1;
    if (slot < 0) {
        r.seqs.emplace_back();
        slot = static_cast<int32_t>(r.seqs.size()) - 1;
    }
    const sequence & parent = r.seqs[seq_index];
    sequence & child = r.seqs[slot];
    if (child.tokens.capacity() < parent.tokens.capacity()) child.tokens.reserve(parent.tokens.capacity());
    child.tokens.assign(parent.tokens.begin(), parent.tokens.end());
    child.n_computed = parent.n_computed;
    child.blocks = kv::table_fork(pool_, parent.blocks);
    child.hashes = parent.hashes;
    child.finished = false;
    child.plan_entry = -1;
    r.forked = true; // the caller forks by hand from now on
    ++epoch_;
    return slot;
}

void scheduler::set_last_token(uint64_t id, int32_t seq_index, int32_t token) {
    auto it = requests_.find(id);
    TM_CHECK(it != requests_.end(), invalid_argument, "scheduler: unknown request " + std::to_string(id));
    request & r = *it->second;
    TM_CHECK(seq_index >= 0 && seq_index < static_cast<int32_t>(r.seqs.size()) && !r.seqs[seq_index].finished,
             invalid_argument, "scheduler: bad sequence index " + std::to_string(seq_index));
    sequence & s = r.seqs[seq_index];
    TM_CHECK(static_cast<int32_t>(s.tokens.size()) > s.n_computed, invalid_argument,
             "scheduler: set_last_token on a sequence with no pending token");
    s.tokens.back() = token;
    ++epoch_;
}

void scheduler::append_token(uint64_t id, int32_t seq_index, int32_t token) {
    auto it = requests_.find(id);
    TM_CHECK(it != requests_.end(), invalid_argument, "scheduler: unknown request " + std::to_string(id));
    request & r = *it->second;
    TM_CHECK(r.external_tokens, invalid_argument, "scheduler: append_token on a request that samples in commit()");
    TM_CHECK(seq_index >= 0 && seq_index < static_cast<int32_t>(r.seqs.size()) && !r.seqs[seq_index].finished,
             invalid_argument, "scheduler: bad sequence index " + std::to_string(seq_index));
    sequence & s = r.seqs[seq_index];
    TM_CHECK(static_cast<int32_t>(s.tokens.size()) == s.n_computed, invalid_argument,
             "scheduler: append_token on a sequence with an uncomputed token");
    s.tokens.push_back(token);
    ++epoch_;
}

void scheduler::running_insert(request * r) {
    if (params_.policy == sched_policy::priority) {
        auto it = std::upper_bound(running_.begin(), running_.end(), r,
                                   [](const request * a, const request * b) { return priority_before(*a, *b); });
        running_.insert(it, r);
    } else {
        running_.push_back(r); // fcfs: the newest admitted is the first victim
    }
}

void scheduler::running_remove(const request * r) {
    auto it = std::find(running_.begin(), running_.end(), r);
    TM_CHECK(it != running_.end(), internal, "scheduler: request not in the running list");
    running_.erase(it);
}

std::string scheduler::refusal(int32_t n_blocks_needed) const {
    if (n_blocks_needed <= pool_.n_blocks()) return std::string();
    return "request needs " + std::to_string(n_blocks_needed) + " KV blocks but the pool has only " +
           std::to_string(pool_.n_blocks());
}

std::string scheduler::refusal_for_prompt(int32_t n_prompt) const {
    return refusal(kv::blocks_for(n_prompt, params_.block_size));
}

int32_t scheduler::blocks_needed_alone(const request & r) const {
    int32_t n = 0;
    for (const auto & s : r.seqs) {
        if (!s.finished) n += kv::blocks_for(static_cast<int32_t>(s.tokens.size()), params_.block_size);
    }
    return n;
}

scheduler_stats scheduler::stats() const {
    scheduler_stats st;
    st.n_running = static_cast<int32_t>(running_.size());
    st.n_waiting = static_cast<int32_t>(waiting_->size());
    st.kv_usage = pool_.usage();
    st.n_blocks_total = pool_.n_blocks();
    st.n_blocks_free = pool_.n_free();
    st.n_prefix_queries = n_prefix_queries_;
    st.n_prefix_hits = n_prefix_hits_;
    st.n_preemptions = n_preemptions_;
    return st;
}

// ---------------------------------------------------------------------------------------------
// planning (mutates only shadow_, the plan and per-sequence scratch indices)

// pre: seq is live; shadow_ reflects every op already in the plan.
scheduler::seq_result scheduler::plan_sequence(plan_state & st, request * r, int32_t seq_index, step_plan & plan) {
    sequence & s = r->seqs[static_cast<size_t>(seq_index)];
    if (st.budget <= 0 || st.n_seqs >= params_.max_num_seqs) return seq_result::no_budget;
    const int32_t bs = params_.block_size;
    const int32_t n_tokens = static_cast<int32_t>(s.tokens.size());
    const bool fresh = s.n_computed == 0 && s.blocks.empty(); // admission: look up the prefix cache
    int32_t n_hit = 0;
    if (fresh && params_.enable_prefix_caching && !r->skip_prefix_cache) {
        const int32_t max_blocks = std::min((n_tokens - 1) / bs, pool_.n_blocks());
        n_hit = kv::prefix_lookup(shadow_, r->root, s.tokens.data(), n_tokens, max_blocks,
                                  scratch_blocks_.data(), scratch_hashes_.data());
    }
    const int32_t pos_start = fresh ? n_hit * bs : s.n_computed;
    const int32_t n_new = std::min(n_tokens - pos_start, st.budget);
    if (n_new <= 0) return seq_result::no_budget;
    const int32_t n_have = fresh ? n_hit : static_cast<int32_t>(s.blocks.size());
    const int32_t n_alloc = kv::blocks_for(pos_start + n_new, bs) - n_have;
    const bool cow = !fresh && kv::needs_copy_on_write(shadow_, s.blocks, s.n_computed);
    int32_t n_revive = 0; // hits on free cached blocks leave the free queue
    for (int32_t i = 0; i < n_hit; ++i) n_revive += shadow_.ref_count(scratch_blocks_[i]) == 0 ? 1 : 0;
    if (n_alloc + (cow ? 1 : 0) + n_revive > shadow_.n_free()) return seq_result::no_blocks;

    plan_entry e;
    e.request_id = r->id;
    e.seq_index = seq_index;
    e.req = r;
    e.seq = &s;
    e.pos_start = pos_start;
    e.n_tokens = n_new;
    e.block_offset = static_cast<int32_t>(plan.block_ids.size());
    if (fresh) {
        for (int32_t i = 0; i < n_hit; ++i) { // take hits before allocating so none is evicted
            shadow_.ref(scratch_blocks_[i]);
            plan.block_ids.push_back(scratch_blocks_[i]);
            plan.ops.push_back({plan_op_kind::hit, r, &s, scratch_blocks_[i]});
        }
        e.n_cached_tokens = pos_start;
    } else {
        plan.block_ids.insert(plan.block_ids.end(), s.blocks.begin(), s.blocks.end());
    }
    if (cow) {
        const int32_t src = s.blocks.back();
        const int32_t dst = shadow_.allocate();
        shadow_.unref(src);
        plan.block_ids.back() = dst;
        plan.ops.push_back({plan_op_kind::cow, r, &s, dst});
        e.copy_src = src;
        e.copy_dst = dst;
    }
    for (int32_t i = 0; i < n_alloc; ++i) {
        const int32_t b = shadow_.allocate();
        plan.block_ids.push_back(b);
        plan.ops.push_back({plan_op_kind::alloc, r, &s, b});
    }
    e.n_blocks = static_cast<int32_t>(plan.block_ids.size()) - e.block_offset;
    e.token_offset = static_cast<int32_t>(plan.token_ids.size());
    plan.token_ids.insert(plan.token_ids.end(), s.tokens.begin() + pos_start, s.tokens.begin() + pos_start + n_new);
    e.need_logits = pos_start + n_new == n_tokens;
    // external_tokens (beams): the row is read but nothing is committed; append_token follows
    e.n_samples = !e.need_logits || r->external_tokens ? 0 : (!r->forked && r->n_seqs_target > 1 ? r->n_seqs_target : 1);
    s.plan_entry = static_cast<int32_t>(plan.entries.size());
    plan.entries.push_back(e);
    st.budget -= n_new;
    st.n_seqs += 1;
    return seq_result::scheduled;
}

// Frees the victim's blocks on the shadow (including any planned this step) and drops its entries. A
// victim that could not run again even alone (it outgrew the pool) is rejected now instead of queued,
// so no waiting request can ever be one that never fits (see submit()).
void scheduler::plan_preempt(plan_state & st, request * victim, step_plan & plan) {
    for (auto & s : victim->seqs) {
        if (s.finished) continue;
        if (s.plan_entry >= 0) {
            plan_entry & e = plan.entries[static_cast<size_t>(s.plan_entry)];
            e.dropped = true;
            st.budget += e.n_tokens;
            st.n_seqs -= 1;
            shadow_.unref_all(plan.block_ids.data() + e.block_offset, e.n_blocks);
            s.plan_entry = -1;
        } else {
            shadow_.unref_all(s.blocks.data(), static_cast<int32_t>(s.blocks.size()));
        }
    }
    st.preempted_any = true;
    std::string refused = refusal(blocks_needed_alone(*victim));
    if (!refused.empty()) {
        plan.ops.push_back({plan_op_kind::reject, victim, nullptr, -1});
        plan.rejected.push_back({victim->id, std::move(refused)});
        return;
    }
    plan.ops.push_back({plan_op_kind::preempt, victim, nullptr, -1});
    plan.preempted.push_back(victim->id);
}

void scheduler::schedule(step_plan & plan) {
    plan.clear();
    plan.epoch = epoch_;
    shadow_.shadow_from(pool_);
    plan_state st;
    st.budget = params_.max_num_batched_tokens;
    st.live_end = running_.size();

    // 1. running requests, in policy order; when blocks run out the back of the list is preempted
    for (size_t i = 0; i < st.live_end; ++i) {
        request * r = running_[i];
        bool self_preempted = false;
        for (int32_t si = 0; si < static_cast<int32_t>(r->seqs.size()) && !self_preempted; ++si) {
            if (r->seqs[static_cast<size_t>(si)].finished) continue;
            while (plan_sequence(st, r, si, plan) == seq_result::no_blocks) {
                request * victim = running_[st.live_end - 1];
                plan_preempt(st, victim, plan);
                st.live_end -= 1;
                if (victim == r) { self_preempted = true; break; }
            }
        }
    }

    // 2. waiting requests, in queue order (skipped when this step already had to preempt)
    if (!st.preempted_any) {
        int32_t n_live = 0; // live sequences that will be running after this step
        for (size_t i = 0; i < st.live_end; ++i) n_live += running_[i]->n_live_seqs();
        for (size_t qi = 0; qi < waiting_->size(); ++qi) {
            request * w = waiting_->at(qi);
            if (st.budget <= 0) break;
            const int32_t k = w->forked ? w->n_live_seqs() : w->n_seqs_target;
            if (n_live + k > params_.max_num_seqs) break;
            bool admitted = false, blocked = false;
            for (int32_t si = 0; si < static_cast<int32_t>(w->seqs.size()) && !blocked; ++si) {
                if (w->seqs[static_cast<size_t>(si)].finished) continue;
                seq_result res;
                while ((res = plan_sequence(st, w, si, plan)) == seq_result::no_blocks) {
                    // priority: a waiting request may preempt a running one with a higher value
                    if (params_.policy == sched_policy::priority && st.live_end > 0 &&
                        priority_before(*w, *running_[st.live_end - 1])) {
                        request * victim = running_[st.live_end - 1];
                        n_live -= victim->n_live_seqs();
                        plan_preempt(st, victim, plan);
                        st.live_end -= 1;
                        continue;
                    }
                    blocked = true;
                    break;
                }
                if (res == seq_result::scheduled) admitted = true;
                if (res == seq_result::no_budget) blocked = true;
            }
            if (admitted) {
                plan.ops.push_back({plan_op_kind::admit, w, nullptr, -1});
                n_live += k;
            }
            if (blocked) break; // keep queue order: nobody overtakes a blocked request
        }
    }

    // 3. finalize: drop preempted entries, collect copies and totals, reset scratch indices. The kept
    // spans are moved together so that token_ids stays their concatenation (the batch the forward pass
    // reads): a victim preempted by a waiting request (priority policy) was planned before it, and
    // its span would otherwise shift the tokens of every entry after it.
    size_t n_kept = 0;
    int32_t n_tokens = 0;
    for (size_t i = 0; i < plan.entries.size(); ++i) {
        plan_entry & e = plan.entries[i];
        if (!e.dropped) e.seq->plan_entry = -1;
        if (e.dropped) continue;
        if (e.copy_src >= 0) plan.copies.push_back({e.copy_src, e.copy_dst});
        if (e.token_offset != n_tokens) {
            std::copy(plan.token_ids.begin() + e.token_offset, plan.token_ids.begin() + e.token_offset + e.n_tokens,
                      plan.token_ids.begin() + n_tokens);
            e.token_offset = n_tokens;
        }
        n_tokens += e.n_tokens;
        plan.n_samples += e.n_samples;
        plan.entries[n_kept++] = e;
    }
    plan.entries.resize(n_kept);
    plan.token_ids.resize(static_cast<size_t>(n_tokens));
    plan.n_batched_tokens = n_tokens;
}

// ---------------------------------------------------------------------------------------------
// commit (the one place that mutates)

void scheduler::cache_full_blocks(const request & r, sequence & s) {
    if (!params_.enable_prefix_caching) return;
    const int32_t bs = params_.block_size;
    const int32_t n_full = s.n_computed / bs;
    for (int32_t i = static_cast<int32_t>(s.hashes.size()); i < n_full; ++i) {
        const kv::block_hash parent = i == 0 ? r.root : s.hashes[static_cast<size_t>(i) - 1];
        const int32_t * blk = s.tokens.data() + static_cast<size_t>(i) * bs;
        const kv::block_hash h = kv::hash_block(parent, blk, bs);
        pool_.cache_block(s.blocks[static_cast<size_t>(i)], h, parent, blk);
        s.hashes.push_back(h);
    }
}

void scheduler::commit(const step_plan & plan, const int32_t * sampled, int32_t n_sampled) {
    TM_CHECK(plan.epoch == epoch_, internal, "scheduler: commit of a stale plan (state changed since schedule)");
    TM_CHECK(n_sampled == plan.n_samples, invalid_argument,
             "scheduler: commit expects " + std::to_string(plan.n_samples) + " sampled tokens, got " +
                 std::to_string(n_sampled));
    ++epoch_;
    for (const plan_op & op : plan.ops) {
        switch (op.kind) {
            case plan_op_kind::preempt:
                release_blocks(*op.req);
                running_remove(op.req);
                op.req->status = request_status::waiting;
                waiting_->push_preempted(op.req);
                ++n_preemptions_;
                break;
            case plan_op_kind::admit:
                waiting_->remove(op.req);
                op.req->status = request_status::running;
                running_insert(op.req);
                break;
            case plan_op_kind::reject: {
                running_remove(op.req);
                release_blocks(*op.req);
                requests_.erase(op.req->id);
                break;
            }
            case plan_op_kind::hit:
                pool_.ref(op.block);
                op.seq->blocks.push_back(op.block);
                break;
            case plan_op_kind::alloc: {
                const int32_t b = pool_.allocate();
                TM_CHECK(b == op.block, internal, "scheduler: replayed allocation differs from the plan");
                op.seq->blocks.push_back(b);
                break;
            }
            case plan_op_kind::cow: {
                const int32_t dst = pool_.allocate();
                TM_CHECK(dst == op.block, internal, "scheduler: replayed allocation differs from the plan");
                pool_.unref(op.seq->blocks.back());
                op.seq->blocks.back() = dst;
                break;
            }
        }
    }
    int32_t k = 0;
    for (const plan_entry & e : plan.entries) {
        request & r = *e.req;
        sequence & s = *e.seq;
        TM_CHECK(static_cast<int32_t>(s.blocks.size()) == e.n_blocks, internal, "scheduler: block table differs from the plan");
        s.n_computed = e.pos_start + e.n_tokens;
        if (e.n_cached_tokens >= 0) {
            n_prefix_queries_ += static_cast<uint64_t>(params_.enable_prefix_caching ? s.tokens.size() : 0);
            n_prefix_hits_ += static_cast<uint64_t>(e.n_cached_tokens);
            if (r.n_cached_tokens < 0) r.n_cached_tokens = e.n_cached_tokens;
        }
        cache_full_blocks(r, s);
        if (e.n_samples == 1) {
            s.tokens.push_back(sampled[k++]);
        } else if (e.n_samples > 1) {
            // first completion of an n > 1 prompt: fork n ways sharing every block (copy-on-write)
            const size_t si = static_cast<size_t>(e.seq_index);
            for (int32_t j = 1; j < e.n_samples; ++j) {
                sequence child;
                child.tokens.reserve(r.seqs[si].tokens.capacity());
                child.tokens = r.seqs[si].tokens;
                child.tokens.push_back(sampled[k + j]);
                child.n_computed = r.seqs[si].n_computed;
                child.blocks = kv::table_fork(pool_, r.seqs[si].blocks);
                child.hashes = r.seqs[si].hashes;
                r.seqs.push_back(std::move(child));
            }
            r.seqs[si].tokens.push_back(sampled[k]);
            k += e.n_samples;
            r.forked = true;
        }
    }
}

} // namespace tmill::sched
