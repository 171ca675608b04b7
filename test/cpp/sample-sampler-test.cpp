// The sampler end to end: greedy path, distributions over 20,000 seeded draws, seeded reproducibility,
// logprobs and prompt logprobs, and custom processors registered by name.
#include "check.h"
#include "sample-test-util.h"

#include "base/error.h"
#include "sample/processor-registry.h"

#include <cmath>
#include <map>
#include <set>

using namespace tm_test::sample_util;

namespace {

struct draw_stats {
    std::map<int32_t, int> counts;
    double entropy() const {
        double n = 0, h = 0;
        for (auto & c : counts) n += c.second;
        for (auto & c : counts) h -= c.second / n * std::log(c.second / n);
        return h;
    }
};

draw_stats draw(const tmill::sampling_params & p, const std::vector<float> & logits, int n_draws) {
    tmill::request_shape shape = shape_of((int32_t)logits.size(), {}, n_draws);
    tmill::sampler s(p, shape);
    tmill::sampler_workspace ws((int32_t)logits.size());
    draw_stats st;
    std::vector<float> row;
    for (int i = 0; i < n_draws; ++i) {
        row = logits;
        st.counts[s.sample(row.data(), history_of({}, {}), ws).token]++;
    }
    return st;
}

std::vector<int32_t> sequence(tmill::sampling_params p, const std::vector<float> & logits, int n) {
    tmill::sampler s(p, shape_of((int32_t)logits.size(), {}, n));
    tmill::sampler_workspace ws((int32_t)logits.size());
    std::vector<int32_t> out;
    std::vector<float> row;
    for (int i = 0; i < n; ++i) {
        row = logits;
        out.push_back(s.sample(row.data(), history_of({}, out), ws).token);
    }
    return out;
}

const std::vector<float> k_logits = logits_of({0.3, 0.2, 0.15, 0.1, 0.08, 0.07, 0.05, 0.03, 0.01, 0.01});
constexpr int k_draws = 20000;

tmill::sampling_params seeded(int64_t seed) {
    tmill::sampling_params p;
    p.seed = seed;
    p.has_seed = true;
    return p;
}

// probs restricted to `kept` and renormalised; 0 elsewhere.
std::vector<double> renormalised(const std::vector<double> & probs, const std::set<int32_t> & kept) {
    double sum = 0;
    for (int32_t t : kept) sum += probs[t];
    std::vector<double> out(probs.size(), 0.0);
    for (int32_t t : kept) out[t] = probs[t] / sum;
    return out;
}

// Every token's count within 5 binomial standard deviations of n·p, and exactly 0 where p = 0. The draws
// are seeded, so this is deterministic; 5σ leaves room for a change of the random stream, and with
// n = 20,000 even a 1% token (200 ± 14) cannot go missing unnoticed.
void check_rates(const draw_stats & st, const std::vector<double> & expected, int n) {
    for (auto & c : st.counts) CHECK(c.first >= 0 && c.first < (int32_t)expected.size());
    for (size_t t = 0; t < expected.size(); ++t) {
        const auto it = st.counts.find((int32_t)t);
        const int count = it == st.counts.end() ? 0 : it->second;
        const double mean = n * expected[t];
        const double sd = std::sqrt(n * expected[t] * (1 - expected[t]));
        if (expected[t] == 0) {
            CHECK_EQ(count, 0);
        } else if (std::abs(count - mean) > 5 * sd) {
            ::tm_test::record_failure(__FILE__, __LINE__, "token " + std::to_string(t) + ": " + std::to_string(count) +
                " draws, expected " + std::to_string(mean) + " ± 5 × " + std::to_string(sd));
        }
    }
}

} // namespace

TM_TEST("sample: greedy takes the first maximum and skips truncation") {
    tmill::sampling_params p;
    p.temperature = 0.0f;
    p.top_k = 1;
    p.top_p = 0.1f;
    tmill::sampler s(p, shape_of(4));
    CHECK(s.greedy());
    for (auto & x : s.chain()) CHECK(!x->argmax_invariant());
    tmill::sampler_workspace ws(4);
    std::vector<float> row = {1.0f, 3.0f, 3.0f, 2.0f};
    CHECK_EQ(s.sample(row.data(), history_of({}, {}), ws).token, 1);
}

TM_TEST("sample: greedy sees penalties and masks") {
    tmill::sampling_params p;
    p.temperature = 0.0f;
    p.presence_penalty = 2.0f;
    tmill::sampler s(p, shape_of(3));
    tmill::sampler_workspace ws(3);
    std::vector<int32_t> out;
    std::vector<float> row = {1.0f, 2.0f, 0.5f};
    out.push_back(s.sample(row.data(), history_of({}, out), ws).token);
    CHECK_EQ(out[0], 1);
    row = {1.0f, 2.0f, 0.5f};  // token 1 now at 0.0 after the penalty
    CHECK_EQ(s.sample(row.data(), history_of({}, out), ws).token, 0);
}

TM_TEST("sample: top_k / top_p / min_p / allowed ids draw every kept token at its renormalised rate") {
    const std::vector<double> probs = {0.3, 0.2, 0.15, 0.1, 0.08, 0.07, 0.05, 0.03, 0.01, 0.01};
    tmill::sampling_params p = seeded(7);
    p.top_k = 3;
    check_rates(draw(p, k_logits, k_draws), renormalised(probs, {0, 1, 2}), k_draws);

    p = seeded(8);
    p.top_p = 0.6f;  // keeps 0.3, 0.2, 0.15 (0.5 before the third < 0.6), drops 0.1
    check_rates(draw(p, k_logits, k_draws), renormalised(probs, {0, 1, 2}), k_draws);

    p = seeded(9);
    p.min_p = 0.3f;  // threshold 0.09: tokens 0..3
    check_rates(draw(p, k_logits, k_draws), renormalised(probs, {0, 1, 2, 3}), k_draws);

    p = seeded(10);
    p.allowed_token_ids = std::vector<int32_t>{8, 9};
    check_rates(draw(p, k_logits, k_draws), renormalised(probs, {8, 9}), k_draws);
}

TM_TEST("sample: untruncated draws follow the softmax, tail included") {
    // the two tail tokens (p = 0.01 each) are expected 200 ± 14 times: a sampler that never draws the
    // tail, or cuts it short, is far outside the bounds
    check_rates(draw(seeded(11), k_logits, k_draws), {0.3, 0.2, 0.15, 0.1, 0.08, 0.07, 0.05, 0.03, 0.01, 0.01}, k_draws);
}

TM_TEST("sample: temperature lowers and raises entropy") {
    tmill::sampling_params p;
    p.seed = 3;
    p.has_seed = true;
    p.temperature = 0.5f;
    const double h_cold = draw(p, k_logits, 2000).entropy();
    p.temperature = 1.0f;
    const double h_one = draw(p, k_logits, 2000).entropy();
    p.temperature = 2.0f;
    const double h_hot = draw(p, k_logits, 2000).entropy();
    CHECK(h_cold < h_one);
    CHECK(h_one < h_hot);
}

TM_TEST("sample: seeded streams are reproducible and distinct") {
    tmill::sampling_params p;
    p.has_seed = true;
    p.seed = 1234;
    const auto a = sequence(p, k_logits, 200);
    const auto b = sequence(p, k_logits, 200);
    CHECK(a == b);
    p.choice_index = 1;
    CHECK(sequence(p, k_logits, 200) != a);
    p.choice_index = 0;
    p.seed = 1235;
    CHECK(sequence(p, k_logits, 200) != a);
    p.seed = -1;  // -1 means "no seed": a fresh random stream each time
    CHECK(sequence(p, k_logits, 200) != sequence(p, k_logits, 200));
}

TM_TEST("sample: logprobs report the processed distribution with ranks") {
    tmill::sampling_params p;
    p.temperature = 0.0f;
    p.logprobs = true;
    p.top_logprobs = 2;
    p.logit_bias = {{2, 1.0f}};
    tmill::sampler s(p, shape_of(4));
    tmill::sampler_workspace ws(4);
    std::vector<float> row = {1.0f, 2.0f, 1.0f, 0.0f};  // after bias: 1, 2, 2, 0
    auto r = s.sample(row.data(), history_of({}, {}), ws);
    const double lse = std::log(std::exp(1.0) + 2 * std::exp(2.0) + 1.0);
    CHECK_EQ(r.token, 1);
    CHECK_NEAR(r.logprob, 2.0 - lse, 1e-6);
    CHECK_EQ(r.rank, 2);  // vLLM counts ties as ≥: two tokens share the top value
    CHECK_EQ(r.n_top, 2);
    CHECK_EQ(r.top[0].token, 1);
    CHECK_EQ(r.top[1].token, 2);
    CHECK_EQ(r.top[0].rank, 1);
    CHECK_EQ(r.top[1].rank, 2);
    CHECK_NEAR(r.top[1].logprob, 2.0 - lse, 1e-6);
}

TM_TEST("sample: logprobs apply temperature but not truncation") {
    tmill::sampling_params p;
    p.temperature = 2.0f;
    p.top_k = 1;
    p.logprobs = true;
    p.top_logprobs = 3;
    p.has_seed = true;
    tmill::sampler s(p, shape_of(3));
    tmill::sampler_workspace ws(3);
    std::vector<float> row = {4.0f, 2.0f, 0.0f};
    auto r = s.sample(row.data(), history_of({}, {}), ws);
    const double lse = std::log(std::exp(2.0) + std::exp(1.0) + 1.0);
    CHECK_EQ(r.token, 0);
    CHECK_NEAR(r.logprob, 2.0 - lse, 1e-6);
    CHECK_NEAR(r.top[2].logprob, 0.0 - lse, 1e-6);
    CHECK_EQ(r.top[2].token, 2);
}

TM_TEST("sample: logprob limits follow max_logprobs") {
    tmill::sampling_params p;
    p.logprobs = true;
    p.top_logprobs = 21;
    try {
        tmill::sampler s(p, shape_of(100));
        CHECK(false);
    } catch (const tmill::error & e) {
        CHECK_EQ(std::string(e.what()), std::string("Requested sample logprobs of 21, which is greater than max allowed: 20"));
    }
    p.top_logprobs = -1;  // whole vocabulary, allowed when the server says -1
    tmill::request_shape shape = shape_of(100);
    shape.max_logprobs = -1;
    tmill::sampler s(p, shape);
    CHECK_EQ(s.n_top(), 100);
    tmill::sampler_workspace ws(100);
    std::vector<float> row(100);
    for (int i = 0; i < 100; ++i) row[i] = (float)((i * 37) % 100);
    auto r = s.sample(row.data(), history_of({}, {}), ws);
    for (int j = 1; j < r.n_top; ++j) CHECK(r.top[j - 1].logprob >= r.top[j].logprob);
    CHECK_EQ(r.top[0].token, 27);  // 27 * 37 = 999: the largest value, 99
}

TM_TEST("sample: prompt logprob is the plain log-softmax") {
    tmill::sampler_workspace ws(3);
    std::vector<float> row = {0.0f, 1.0f, 2.0f};
    tmill::token_logprob top[2];
    auto lp = tmill::prompt_logprob(row.data(), 3, 0, 2, top, ws);
    const double lse = std::log(1.0 + std::exp(1.0) + std::exp(2.0));
    CHECK_NEAR(lp.logprob, -lse, 1e-6);
    CHECK_EQ(lp.rank, 3);
    CHECK_EQ(top[0].token, 2);
    CHECK_EQ(top[1].token, 1);
    CHECK_NEAR(top[0].logprob, 2.0 - lse, 1e-6);
    CHECK_THROWS_CODE(tmill::prompt_logprob(row.data(), 3, 3, 2, top, ws), invalid_argument);
}

namespace {

// A custom processor: bans the token named by xargs["ban"]; inactive without it.
class ban_processor final : public tmill::logits_processor {
public:
    explicit ban_processor(int32_t id) : id_(id) {}
    const char * name() const override { return "ban"; }
    tmill::processor_stage stage() const override { return tmill::processor_stage::mask; }
    bool argmax_invariant() const override { return false; }
    void apply(float * row, const tmill::token_history &, tmill::sampler_workspace &) override { row[id_] = ninf; }

private:
    int32_t id_;
};

} // namespace

TM_TEST("sample: custom processors receive vllm_xargs") {
    tmill::register_logits_processor("test-ban", [](const tmill::xargs_map & x, const tmill::request_shape & shape) -> tmill::processor_ptr {
        auto it = x.find("ban");
        if (it == x.end()) return nullptr;
        TM_CHECK(it->second.type == tmill::xarg_value::kind::number && it->second.number >= 0 &&
                     it->second.number < shape.n_vocab,
                 invalid_argument, "ban must be a token id");
        return std::make_unique<ban_processor>((int32_t)it->second.number);
    });
    CHECK_THROWS_CODE(tmill::register_logits_processor("test-ban", nullptr), invalid_argument);

    tmill::sampling_params p;
    p.temperature = 0.0f;
    tmill::sampler_workspace ws(3);
    std::vector<float> row = {0.0f, 5.0f, 1.0f};
    {
        tmill::sampler s(p, shape_of(3));
        CHECK_EQ(s.sample(row.data(), history_of({}, {}), ws).token, 1);
    }
    p.xargs["ban"] = tmill::xarg_value::of_number(1);
    {
        tmill::sampler s(p, shape_of(3));
        row = {0.0f, 5.0f, 1.0f};
        CHECK_EQ(s.sample(row.data(), history_of({}, {}), ws).token, 2);
    }
    p.xargs["ban"] = tmill::xarg_value::of_string("x");
    CHECK_THROWS_CODE(tmill::sampler(p, shape_of(3)), invalid_argument);
    CHECK(tmill::unregister_logits_processor("test-ban"));
    CHECK(!tmill::unregister_logits_processor("test-ban"));
}
