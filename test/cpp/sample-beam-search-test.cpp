// Beam search bookkeeping on a hand-made two-step search (prompt of 2 tokens, width 2, EOS = 9).
#include "check.h"

#include "base/error.h"
#include "sample/beam-search.h"

#include <vector>

namespace {

std::vector<int32_t> parents_of(tmill::beam_search & bs, const std::vector<std::vector<tmill::token_logprob>> & tops) {
    std::vector<const tmill::token_logprob *> ptrs;
    std::vector<int32_t> ns;
    for (const auto & t : tops) {
        ptrs.push_back(t.data());
        ns.push_back((int32_t)t.size());
    }
    return bs.step(ptrs, ns);
}

tmill::beam_params params(bool include_eos, float length_penalty) {
    tmill::beam_params p;
    p.width = 2;
    p.length_penalty = length_penalty;
    p.eos_token_ids = {9};
    p.include_stop_str_in_output = include_eos;
    return p;
}

void two_steps(tmill::beam_search & bs) {
    // step 1: one live beam (the prompt)
    auto parents = parents_of(bs, {{{5, -0.1f, 1}, {6, -0.5f, 2}, {9, -1.0f, 3}, {7, -2.0f, 4}}});
    CHECK(parents == std::vector<int32_t>({0, 0}));
    // step 2: beam 0 = [5], beam 1 = [6]
    parents = parents_of(bs, {{{1, -1.0f, 1}, {2, -2.0f, 2}}, {{3, -0.1f, 1}, {9, -0.2f, 2}}});
    CHECK(parents == std::vector<int32_t>({1, 0}));
}

} // namespace

TM_TEST("sample: beam_score divides by length^penalty") {
    CHECK_NEAR(tmill::beam_score(-2.0, 4, 0.5f), -1.0, 1e-12);
    CHECK_NEAR(tmill::beam_score(-2.0, 4, 1.0f), -0.5, 1e-12);
    CHECK_NEAR(tmill::beam_score(-2.0, 4, 0.0f), -2.0, 1e-12);
}

TM_TEST("sample: beam search keeps the best width and completes EOS beams") {
    tmill::beam_search bs(params(false, 1.0f), 2);
    two_steps(bs);
    const auto & live = bs.live();
    CHECK_EQ(live.size(), (size_t)2);
    CHECK(live[0].tokens == std::vector<int32_t>({6, 3}));
    CHECK_NEAR(live[0].cum_logprob, -0.6, 1e-6);
    CHECK_NEAR(live[0].score, -0.15, 1e-6);
    CHECK(live[1].tokens == std::vector<int32_t>({5, 1}));
    CHECK_NEAR(live[1].score, -0.275, 1e-6);
    CHECK_EQ(bs.completed().size(), (size_t)2);
    CHECK(bs.completed()[0].tokens.empty());  // EOS right after the prompt, EOS not kept
    CHECK_NEAR(bs.completed()[0].score, -0.5, 1e-6);

    auto best = bs.finish(2);
    CHECK_EQ(best.size(), (size_t)2);
    CHECK(best[0].tokens == std::vector<int32_t>({6, 3}));
    CHECK(!best[0].ended_eos);              // finish_reason length
    CHECK(best[1].tokens == std::vector<int32_t>({6}));
    CHECK(best[1].ended_eos);               // finish_reason stop
    CHECK_NEAR(best[1].score, -0.7 / 3, 1e-6);
}

TM_TEST("sample: beam search EOS kept with include_stop_str_in_output scores the same") {
    tmill::beam_search bs(params(true, 1.0f), 2);
    two_steps(bs);
    auto best = bs.finish(2);
    CHECK(best[1].tokens == std::vector<int32_t>({6, 9}));
    CHECK_NEAR(best[1].score, -0.7 / 3, 1e-6);  // the trailing EOS does not count in the length
}

TM_TEST("sample: beam search length_penalty 0 ranks by cumulative logprob") {
    tmill::beam_search bs(params(false, 0.0f), 2);
    two_steps(bs);
    auto best = bs.finish(3);
    CHECK_EQ(best.size(), (size_t)3);
    CHECK_NEAR(best[0].cum_logprob, -0.6, 1e-6);
    CHECK_NEAR(best[1].cum_logprob, -0.7, 1e-6);
    CHECK_NEAR(best[2].cum_logprob, -1.0, 1e-6);  // the EOS-after-prompt beam beats [5, 1] (-1.1)
    CHECK(best[2].ended_eos);
}

TM_TEST("sample: beam search ends when every candidate is EOS; bad input is rejected") {
    tmill::beam_search bs(params(false, 1.0f), 1);
    auto parents = parents_of(bs, {{{9, -0.1f, 1}}});
    CHECK(parents.empty());
    CHECK(bs.done());
    CHECK_EQ(bs.finish(2).size(), (size_t)1);
    tmill::beam_search other(params(false, 1.0f), 1);
    CHECK_THROWS_CODE(other.step({}, {}), invalid_argument);
    tmill::beam_params zero = params(false, 1.0f);
    zero.width = 0;
    CHECK_THROWS_CODE(tmill::beam_search(zero, 1), invalid_argument);
}
