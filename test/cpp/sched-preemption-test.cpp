// Scheduler under KV pressure: preemption with recompute keeps outputs identical, requests that can
// never fit are rejected without blocking others, and the fcfs / priority policies pick the right
// request to run and the right victim.
#include "sched-test-helpers.h"

using namespace tm_test;
using tmill::sched::scheduler;
using tmill::sched::sched_policy;

TM_TEST("sched: preemption and recompute give identical streams (with and without prefix caching)") {
    for (bool caching : {true, false}) {
        auto p = make_params(12, 8, 64);
        p.enable_prefix_caching = caching;
        scheduler s(p);
        driver d(s);
        for (uint64_t id = 0; id < 6; ++id) d.submit(id, make_prompt(400 + id, 30), 40);
        CHECK(d.run());
        CHECK(s.stats().n_preemptions > 0);
        CHECK(d.bounds_ok);
        CHECK(d.model.kv_ok);
        CHECK(d.errors.empty());
        for (uint64_t id = 0; id < 6; ++id) CHECK((d.out[{id, 0}] == reference_output(make_prompt(400 + id, 30), 40)));
        CHECK_EQ(s.pool().n_free(), 12);
        if (!caching) CHECK_EQ(s.stats().n_prefix_hits, uint64_t(0));
    }
}

TM_TEST("sched: fcfs preempts the newest running request") {
    scheduler s(make_params(8, 8, 256));
    driver d(s);
    d.submit(1, make_prompt(20, 40), 60); // 3 blocks now, 7 at the end: both cannot finish together
    d.submit(2, make_prompt(21, 40), 60);
    d.step();
    CHECK_EQ(s.stats().n_running, 2);
    bool saw = false;
    for (int i = 0; i < 40 && !saw; ++i) {
        tmill::sched::step_plan plan;
        s.schedule(plan);
        if (!plan.preempted.empty()) {
            saw = true;
            CHECK((plan.preempted == std::vector<uint64_t>{2}));
        }
        auto sampled = d.model.run(plan);
        s.commit(plan, sampled.data(), int32_t(sampled.size()));
    }
    CHECK(saw);
    CHECK(d.run());
    CHECK((d.out[{1, 0}] == reference_output(make_prompt(20, 40), 60)));
    CHECK((d.out[{2, 0}] == reference_output(make_prompt(21, 40), 60)));
    CHECK(d.errors.empty());
    CHECK(!d.finish_order.empty() && d.finish_order.front() == 1);
}

TM_TEST("sched: a request larger than the whole pool is refused at submit, one that outgrows it when preempted") {
    scheduler s(make_params(8, 8, 64));
    driver d(s);
    // 13 blocks > 8: never queued (queued, it would wait behind any request blocked ahead of it)
    CHECK_EQ(s.refusal_for_prompt(200), std::string("request needs 13 KV blocks but the pool has only 8"));
    CHECK(s.refusal_for_prompt(128).empty());
    CHECK_THROWS_CODE(d.submit(2, make_prompt(31, 200), 10), invalid_argument);
    CHECK(s.find(2) == nullptr);
    d.submit(3, make_prompt(32, 120), 30); // fits, but outgrows the pool while decoding
    // Request 3 needs a 9th block for its 129th token: it is rejected in the step that would preempt it
    // (recomputed alone it could not run either), never queued again.
    bool rejected = false;
    for (int i = 0; i < 200 && !rejected; ++i) {
        tmill::sched::step_plan plan;
        s.schedule(plan);
        for (const auto & rej : plan.rejected) {
            CHECK_EQ(rej.request_id, uint64_t(3));
            CHECK_EQ(rej.message, std::string("request needs 9 KV blocks but the pool has only 8"));
            CHECK(plan.preempted.empty());
            CHECK_EQ(int32_t(s.find(3)->seqs[0].tokens.size()), 129);
            rejected = true;
        }
        auto sampled = d.model.run(plan);
        s.commit(plan, sampled.data(), int32_t(sampled.size()));
    }
    CHECK(rejected);
    CHECK(s.find(3) == nullptr);
    CHECK_EQ(s.stats().n_waiting + s.stats().n_running, 0);
    CHECK_EQ(s.pool().n_free(), 8);
    d.submit(1, make_prompt(30, 20), 10); // the scheduler keeps serving
    d.submit(4, make_prompt(33, 20), 10);
    CHECK(d.run(5000));                    // no deadlock
    CHECK(d.errors.empty());
    CHECK((d.out[{1, 0}] == reference_output(make_prompt(30, 20), 10)));
    CHECK((d.out[{4, 0}] == reference_output(make_prompt(33, 20), 10)));
    CHECK_EQ(s.pool().n_free(), 8);
}

TM_TEST("sched: priority policy runs lower values first, ties by arrival") {
    scheduler s(make_params(64, 1, 256, sched_policy::priority));
    driver d(s);
    d.submit(1, make_prompt(40, 10), 3, 5);
    d.submit(2, make_prompt(41, 10), 3, 1);
    d.submit(3, make_prompt(42, 10), 3, 3);
    d.submit(4, make_prompt(43, 10), 3, 1);
    CHECK(d.run());
    CHECK((d.finish_order == std::vector<uint64_t>{2, 4, 3, 1}));
    // fcfs ignores the priority values
    scheduler f(make_params(64, 1, 256, sched_policy::fcfs));
    driver df(f);
    df.submit(1, make_prompt(40, 10), 3, 5);
    df.submit(2, make_prompt(41, 10), 3, 1);
    df.submit(3, make_prompt(42, 10), 3, 3);
    CHECK(df.run());
    CHECK((df.finish_order == std::vector<uint64_t>{1, 2, 3}));
}

TM_TEST("sched: a waiting request with a lower priority value preempts a running one") {
    scheduler s(make_params(8, 8, 256, sched_policy::priority));
    driver d(s);
    auto pa = make_prompt(50, 100);
    auto pb = make_prompt(51, 40);
    d.submit(1, pa, 20, 10); // 7 blocks
    d.step();
    d.step();
    d.submit(2, pb, 5, 0);   // needs 3 blocks, only 1 free: request 1 must make room
    tmill::sched::step_plan plan;
    s.schedule(plan);
    CHECK((plan.preempted == std::vector<uint64_t>{1}));
    CHECK_EQ(plan.entries.size(), size_t(1));
    CHECK_EQ(plan.entries[0].request_id, uint64_t(2));
    // Request 1's decode token was planned before it was preempted: the batch is request 2's prompt
    // alone (that token left in front of it shifted the prompt by one in the engine's forward pass).
    CHECK((plan.token_ids == pb));
    CHECK_EQ(plan.entries[0].token_offset, 0);
    CHECK_EQ(plan.n_batched_tokens, 40);
    auto sampled = d.model.run(plan);
    s.commit(plan, sampled.data(), int32_t(sampled.size()));
    CHECK_EQ(s.stats().n_preemptions, uint64_t(1));
    CHECK(d.run());
    CHECK((d.finish_order == std::vector<uint64_t>{2, 1}));
    CHECK((d.out[{1, 0}] == reference_output(pa, 20)));
    CHECK((d.out[{2, 0}] == reference_output(pb, 5)));
    CHECK(d.model.kv_ok);
    CHECK_EQ(s.pool().n_free(), 8);

    // the same under fcfs: the newcomer waits instead
    scheduler f(make_params(8, 8, 256, sched_policy::fcfs));
    driver df(f);
    df.submit(1, pa, 20, 0);
    df.step();
    df.step();
    df.submit(2, pb, 5, 0);
    CHECK(df.run());
    CHECK_EQ(f.stats().n_preemptions, uint64_t(0));
    CHECK((df.finish_order == std::vector<uint64_t>{1, 2}));
}

TM_TEST("sched: n > 1 groups survive preemption and recompute") {
    scheduler s(make_params(10, 8, 64));
    driver d(s);
    auto prompt = make_prompt(60, 25);
    d.submit(1, prompt, 30, 0, "", 2);
    d.submit(2, make_prompt(61, 40), 40);
    d.submit(3, make_prompt(62, 40), 40);
    CHECK(d.run());
    CHECK(s.stats().n_preemptions > 0);
    CHECK(d.errors.empty());
    CHECK((d.out[{1, 0}] == reference_output(prompt, 30, 0)));
    CHECK((d.out[{1, 1}] == reference_output(prompt, 30, 1)));
    CHECK((d.out[{2, 0}] == reference_output(make_prompt(61, 40), 40)));
    CHECK((d.out[{3, 0}] == reference_output(make_prompt(62, 40), 40)));
    CHECK(d.model.kv_ok);
    CHECK_EQ(s.pool().n_free(), 10);
}

TM_TEST("sched: randomized submits, aborts, priorities and n > 1 under a tiny pool") {
    for (auto policy : {sched_policy::fcfs, sched_policy::priority}) {
        scheduler s(make_params(24, 6, 48, policy));
        driver d(s);
        uint64_t rng = 12345;
        auto next = [&rng](uint64_t m) { rng = fake_mix(rng + 0x9e37); return rng % m; };
        std::map<uint64_t, std::pair<std::vector<int32_t>, int32_t>> spec; // id → (prompt, n)
        std::vector<uint64_t> aborted;
        uint64_t id = 0;
        for (int step = 0; step < 400; ++step) {
            if (id < 60 && next(3) == 0) {
                auto prompt = make_prompt(500 + id % 7, 5 + int32_t(next(60))); // shared prefixes
                const int32_t n = next(5) == 0 ? 2 : 1;
                spec[id] = {prompt, n};
                d.submit(id, prompt, 3 + int32_t(next(25)), policy == sched_policy::priority ? int64_t(next(4)) : 0,
                         next(4) == 0 ? "salt" : "", n);
                ++id;
            }
            if (id > 0 && next(17) == 0) {
                const uint64_t victim = next(id);
                if (s.abort(victim)) aborted.push_back(victim);
            }
            d.step();
        }
        CHECK(d.run(20000));
        CHECK(d.bounds_ok);
        CHECK(d.model.kv_ok);
        CHECK_EQ(s.pool().n_free(), 24);
        for (const auto & kv : d.out) {
            const auto & sp = spec[kv.first.first];
            CHECK((kv.second == reference_output(sp.first, int32_t(kv.second.size()), sp.second > 1 ? kv.first.second : 0)));
        }
        CHECK(d.out.size() + aborted.size() + d.errors.size() >= size_t(id)); // every request ended somehow
    }
}
