// Scheduler primitives for beam search: external_tokens requests get logits rows without samples and
// wait for append_token; forks reuse finished slots; the pool is whole afterwards.
#include "sched-test-helpers.h"

using namespace tm_test;
using tmill::sched::scheduler;

namespace {

void submit_beam(scheduler & s, uint64_t id, std::vector<int32_t> prompt, int32_t width) {
    tmill::sched::request_params p;
    p.id = id;
    p.prompt = std::move(prompt);
    p.n_seqs = width;
    p.n_max_tokens = 8;
    p.external_tokens = true;
    s.submit(std::move(p));
}

// schedule → fake forward → commit; returns the plan's entries.
std::vector<tmill::sched::plan_entry> step(scheduler & s, fake_model & m) {
    tmill::sched::step_plan plan;
    s.schedule(plan);
    std::vector<int32_t> sampled = m.run(plan);
    CHECK(sampled.empty()); // nothing is sampled for external_tokens entries
    s.commit(plan, sampled.data(), int32_t(sampled.size()));
    return plan.entries;
}

} // namespace

TM_TEST("sched: external_tokens rows are not sampled; sequences wait for append_token") {
    scheduler s(make_params(16));
    fake_model m(16, 16);
    auto prompt = make_prompt(3, 20);
    submit_beam(s, 1, prompt, 3);
    auto entries = step(s, m);
    CHECK_EQ(entries.size(), size_t(1));
    CHECK(entries[0].need_logits);
    CHECK_EQ(entries[0].n_samples, 0);
    const auto * r = s.find(1);
    CHECK_EQ(r->seqs.size(), size_t(1)); // no automatic n-way fork
    CHECK_EQ(r->seqs[0].n_computed, 20);
    CHECK_EQ(r->seqs[0].tokens.size(), size_t(20));
    CHECK(step(s, m).empty()); // fully computed, nothing to run until a token is appended
    s.append_token(1, 0, 7);
    CHECK_THROWS_CODE(s.append_token(1, 0, 8), invalid_argument); // the 7 is not computed yet
    const int32_t c1 = s.fork_sequence(1, 0);
    CHECK_EQ(c1, 1);
    s.set_last_token(1, c1, 9);
    entries = step(s, m);
    CHECK_EQ(entries.size(), size_t(2));
    for (const auto & e : entries) CHECK(e.need_logits && e.n_samples == 0 && e.pos_start == 20 && e.n_tokens == 1);
    r = s.find(1);
    CHECK_EQ(r->seqs[0].tokens.back(), 7);
    CHECK_EQ(r->seqs[1].tokens.back(), 9);
    CHECK(r->seqs[0].blocks[0] == r->seqs[1].blocks[0]); // the full prompt block stays shared
    CHECK(r->seqs[0].blocks[1] != r->seqs[1].blocks[1]); // the partial one was copied on write
    CHECK(m.kv_ok);

    // a dropped beam's slot is reused by the next fork
    CHECK(!s.finish_sequence(1, 0));
    s.append_token(1, 1, 11);
    const int32_t c2 = s.fork_sequence(1, 1);
    CHECK_EQ(c2, 0);
    s.set_last_token(1, c2, 12);
    r = s.find(1);
    CHECK_EQ(r->seqs.size(), size_t(2));
    CHECK(!r->seqs[0].finished);
    CHECK_EQ(r->seqs[0].tokens.size(), size_t(22));
    CHECK_EQ(r->seqs[0].tokens.back(), 12);
    CHECK_EQ(r->seqs[1].tokens.back(), 11);
    CHECK_EQ(step(s, m).size(), size_t(2));
    CHECK(m.kv_ok);
    CHECK(s.finish_request(1));
    CHECK_EQ(s.pool().n_free(), 16);
}

TM_TEST("sched: append_token is refused for requests the scheduler samples") {
    scheduler s(make_params(16));
    driver d(s);
    d.submit(1, make_prompt(4, 10), 5);
    d.step();
    CHECK_THROWS_CODE(s.append_token(1, 0, 3), invalid_argument);
    CHECK_THROWS_CODE(s.append_token(2, 0, 3), invalid_argument);
    CHECK(d.run());
}
