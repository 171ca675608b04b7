// Scheduler with a fake model: outputs equal the scheduler-free reference, chunked prefill,
// prefix hits, cache_salt isolation, aborts, bounds, n > 1 forks and stale plans.
#include <algorithm>

#include "sched-test-helpers.h"

using namespace tm_test;
using tmill::sched::scheduler;

TM_TEST("sched: one request generates the reference stream") {
    scheduler s(make_params(64));
    driver d(s);
    auto prompt = make_prompt(1, 37);
    d.submit(1, prompt, 20);
    CHECK(d.run());
    CHECK((d.out[{1, 0}] == reference_output(prompt, 20)));
    CHECK(d.model.kv_ok);
    CHECK_EQ(s.pool().n_free(), 64);
    CHECK_EQ(s.stats().n_running, 0);
}

TM_TEST("sched: chunked prefill splits a long prompt by max_num_batched_tokens") {
    scheduler s(make_params(64, 8, 32));
    driver d(s);
    auto prompt = make_prompt(2, 100);
    d.submit(1, prompt, 5);
    tmill::sched::step_plan plan;
    std::vector<int32_t> starts;
    for (int i = 0; i < 4; ++i) { // 32 + 32 + 32 + 4 tokens: logits only on the last chunk
        s.schedule(plan);
        CHECK_EQ(plan.entries.size(), size_t(1));
        starts.push_back(plan.entries[0].pos_start);
        CHECK_EQ(plan.entries[0].need_logits, i == 3);
        CHECK_EQ(plan.entries[0].n_blocks, tmill::kv::blocks_for(plan.entries[0].pos_start + plan.entries[0].n_tokens, 16));
        auto sampled = d.model.run(plan);
        s.commit(plan, sampled.data(), int32_t(sampled.size()));
    }
    CHECK((starts == std::vector<int32_t>{0, 32, 64, 96}));
    CHECK(d.run());
    CHECK((d.out[{1, 0}] == reference_output(prompt, 5)));
    CHECK(d.bounds_ok);
}

TM_TEST("sched: prefix hits reuse full blocks, never the whole prompt, same output") {
    scheduler s(make_params(64));
    driver d(s);
    auto prompt = make_prompt(3, 40);
    d.submit(1, prompt, 4);
    CHECK(d.run());
    d.submit(2, prompt, 4);
    CHECK(d.run());
    CHECK_EQ(d.cached[1], 0);
    CHECK_EQ(d.cached[2], 32);
    CHECK((d.out[{2, 0}] == reference_output(prompt, 4)));
    CHECK((d.out[{1, 0}] == d.out[{2, 0}]));
    auto st = s.stats();
    CHECK_EQ(st.n_prefix_queries, uint64_t(80));
    CHECK_EQ(st.n_prefix_hits, uint64_t(32));
    // a prompt of exactly 32 tokens: only 16 may come from the cache (the last token is computed)
    auto p32 = make_prompt(4, 32);
    d.submit(3, p32, 2);
    CHECK(d.run());
    d.submit(4, p32, 2);
    CHECK(d.run());
    CHECK_EQ(d.cached[4], 16);
    CHECK((d.out[{4, 0}] == reference_output(p32, 2)));
    // a prompt extending a cached one hits the shared prefix (generated tokens were cached too)
    auto longer = prompt;
    for (int32_t t : d.out[{1, 0}]) longer.push_back(t);
    longer.push_back(5);
    d.submit(5, longer, 3);
    CHECK(d.run());
    CHECK_EQ(d.cached[5], 32);
    CHECK((d.out[{5, 0}] == reference_output(longer, 3)));
    CHECK(d.model.kv_ok);
    CHECK_EQ(s.pool().n_free(), 64);
}

TM_TEST("sched: cache_salt isolates prefix hits") {
    scheduler s(make_params(64));
    driver d(s);
    auto prompt = make_prompt(5, 48);
    d.submit(1, prompt, 2, 0, "alpha");
    CHECK(d.run());
    d.submit(2, prompt, 2);            // unsalted: no hit
    CHECK(d.run());
    d.submit(3, prompt, 2, 0, "beta"); // other salt: no hit
    CHECK(d.run());
    d.submit(4, prompt, 2, 0, "alpha");
    CHECK(d.run());
    d.submit(5, prompt, 2);            // unsalted again: hits request 2's blocks
    CHECK(d.run());
    CHECK_EQ(d.cached[2], 0);
    CHECK_EQ(d.cached[3], 0);
    CHECK_EQ(d.cached[4], 32);
    CHECK_EQ(d.cached[5], 32);
    for (uint64_t id = 1; id <= 5; ++id) CHECK((d.out[{id, 0}] == reference_output(prompt, 2)));
}

TM_TEST("sched: abort while waiting, mid-prefill and mid-decode returns every block") {
    scheduler s(make_params(32, 8, 32));
    driver d(s);
    d.submit(1, make_prompt(6, 100), 50); // needs 4 prefill steps at 32 tokens per step
    d.submit(2, make_prompt(7, 10), 50);
    d.submit(3, make_prompt(8, 10), 50);
    d.step();                              // 1 prefills, 2 and 3 wait (budget spent)
    CHECK_EQ(s.stats().n_waiting, 2);
    CHECK(s.abort(3));                     // waiting
    CHECK(!s.abort(3));                    // idempotent
    d.step();
    CHECK(s.abort(1));                     // mid-prefill (64 of 100 computed)
    for (int i = 0; i < 5; ++i) d.step();  // 2 decodes
    const auto * r2 = s.find(2);
    CHECK(r2 != nullptr && r2->seqs[0].tokens.size() > 10);
    CHECK(s.abort(2));                     // mid-decode
    CHECK(!s.has_work());
    CHECK_EQ(s.pool().n_free(), 32);
    CHECK_NEAR(s.stats().kv_usage, 0.0, 1e-12);
    tmill::sched::step_plan plan;
    s.schedule(plan);
    CHECK(plan.empty());
}

TM_TEST("sched: 64 concurrent requests all finish with bounds respected") {
    scheduler s(make_params(256, 16, 64));
    driver d(s);
    for (uint64_t id = 0; id < 64; ++id) d.submit(id, make_prompt(100 + id, 20 + int32_t(id % 13) * 7), 8 + int32_t(id % 5));
    CHECK(d.run());
    CHECK(d.bounds_ok);
    CHECK_EQ(d.finish_order.size(), size_t(64));
    for (uint64_t id = 0; id < 64; ++id) {
        CHECK((d.out[{id, 0}] == reference_output(make_prompt(100 + id, 20 + int32_t(id % 13) * 7), 8 + int32_t(id % 5))));
    }
    CHECK(d.model.kv_ok);
    CHECK(d.max_entries_seen > 1 && d.max_entries_seen <= 16);
    CHECK(d.max_batched_seen <= 64);
    CHECK_EQ(s.pool().n_free(), 256);
}

TM_TEST("sched: n > 1 computes the prompt once and forks copy-on-write") {
    scheduler s(make_params(64));
    driver d(s);
    auto prompt = make_prompt(9, 21); // partial last block: forks must copy before writing
    d.submit(1, prompt, 6, 0, "", 3);
    tmill::sched::step_plan plan;
    s.schedule(plan);
    CHECK_EQ(plan.entries.size(), size_t(1));
    CHECK_EQ(plan.n_samples, 3);
    auto sampled = d.model.run(plan);
    s.commit(plan, sampled.data(), 3);
    const auto * r = s.find(1);
    CHECK_EQ(r->seqs.size(), size_t(3));
    CHECK_EQ(s.pool().ref_count(r->seqs[0].blocks[0]), 3);
    CHECK_EQ(s.pool().n_free(), 62);
    s.schedule(plan);
    CHECK_EQ(plan.entries.size(), size_t(3));
    CHECK_EQ(plan.copies.size(), size_t(2)); // two copies, the last sharer writes in place
    CHECK_EQ(plan.n_batched_tokens, 3);
    sampled = d.model.run(plan);
    s.commit(plan, sampled.data(), int32_t(sampled.size()));
    CHECK(d.run());
    for (int32_t j = 0; j < 3; ++j) CHECK((d.out[{1, j}] == reference_output(prompt, 6, j)));
    CHECK_EQ(d.n_tokens_computed, 3 * 4); // after the manual steps (21, then 3): one token per choice
    CHECK(d.model.kv_ok);
    CHECK_EQ(s.pool().n_free(), 64);
}

TM_TEST("sched: beam primitives fork, replace the last token and free sequences") {
    scheduler s(make_params(16));
    driver d(s);
    auto prompt = make_prompt(10, 16); // block-aligned prompt: forks need no copy
    d.submit(1, prompt, 100);
    d.step();
    const int32_t child = s.fork_sequence(1, 0);
    CHECK_EQ(child, 1);
    const int32_t alt = (s.find(1)->seqs[0].tokens.back() + 1) % fake_vocab;
    s.set_last_token(1, child, alt);
    d.step();
    const auto * r = s.find(1);
    auto h0 = prompt; h0.push_back(fake_next(prompt));
    auto h1 = prompt; h1.push_back(alt);
    CHECK_EQ(r->seqs[0].tokens.back(), fake_next(h0));
    CHECK_EQ(r->seqs[1].tokens.back(), fake_next(h1));
    CHECK(r->seqs[0].blocks[0] == r->seqs[1].blocks[0]);
    CHECK(r->seqs[0].blocks[1] != r->seqs[1].blocks[1]);
    CHECK(!s.finish_sequence(1, 0));
    CHECK_THROWS_CODE(s.finish_sequence(1, 0), invalid_argument);
    CHECK(s.finish_sequence(1, 1));
    CHECK(s.find(1) == nullptr);
    CHECK_EQ(s.pool().n_free(), 16);
    CHECK(d.model.kv_ok);
}

TM_TEST("sched: a stale plan or a wrong sample count is refused") {
    scheduler s(make_params(16));
    driver d(s);
    d.submit(1, make_prompt(11, 5), 3);
    tmill::sched::step_plan plan;
    s.schedule(plan);
    CHECK_THROWS_CODE(s.commit(plan, nullptr, 0), invalid_argument);
    d.submit(2, make_prompt(12, 5), 3);
    int32_t tok = 1;
    CHECK_THROWS_CODE(s.commit(plan, &tok, 1), internal);
    CHECK_THROWS_CODE(d.submit(2, make_prompt(12, 5), 3), invalid_argument); // duplicate live id
    CHECK(d.run());
    CHECK_EQ(s.pool().n_free(), 16);
}

TM_TEST("sched: max_num_seqs bounds the batch when tokens are plentiful") {
    scheduler s(make_params(512, 16, 4096));
    driver d(s);
    for (uint64_t id = 0; id < 64; ++id) d.submit(id, make_prompt(300 + id, 9), 6);
    CHECK(d.run());
    CHECK(d.bounds_ok);
    CHECK_EQ(d.max_entries_seen, 16);
    CHECK_EQ(d.finish_order.size(), size_t(64));
    for (uint64_t id = 0; id < 64; ++id) CHECK((d.out[{id, 0}] == reference_output(make_prompt(300 + id, 9), 6)));
    // fcfs: requests finish in submission order when they all have the same length
    CHECK(std::is_sorted(d.finish_order.begin(), d.finish_order.end()));
}
