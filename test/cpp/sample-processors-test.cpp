// Each built-in processor on hand-made logits with hand-computed results, plus vLLM's messages.
#include "check.h"
#include "sample-test-util.h"

#include "base/error.h"
#include "sample/processors.h"
#include "sample/py-format.h"

#include <limits>
#include <string>

using namespace tm_test::sample_util;

namespace {

// Runs one processor built by `make` over `row` with the given output history.
template <typename Make>
std::vector<float> run(Make make, const tmill::sampling_params & p, std::vector<float> row,
                       const std::vector<int32_t> & prompt = {}, const std::vector<int32_t> & output = {}) {
    tmill::request_shape shape = shape_of((int32_t)row.size(), prompt);
    tmill::processor_ptr proc = make(p, shape);
    if (!proc) return row;
    for (int32_t t : output) proc->accept(t);
    tmill::sampler_workspace ws((int32_t)row.size());
    proc->apply(row.data(), history_of(prompt, output), ws);
    return row;
}

std::string message_of(const std::function<void()> & fn) {
    try {
        fn();
    } catch (const tmill::error & e) {
        return e.what();
    }
    return "<no throw>";
}

} // namespace

TM_TEST("sample: temperature divides logits") {
    tmill::sampling_params p;
    p.temperature = 2.0f;
    auto r = run(tmill::make_temperature, p, {1.0f, 2.0f, -3.0f});
    CHECK_NEAR(r[0], 0.5, 1e-7);
    CHECK_NEAR(r[1], 1.0, 1e-7);
    CHECK_NEAR(r[2], -1.5, 1e-7);
    p.temperature = 0.001f;  // raised to 0.01 like vLLM
    r = run(tmill::make_temperature, p, {1.0f});
    CHECK_NEAR(r[0], 100.0, 1e-3);
    p.temperature = 0.0f;    // greedy: no processor
    CHECK(tmill::make_temperature(p, shape_of(3)) == nullptr);
    CHECK_EQ(tmill::effective_temperature(0.0f), 0.0f);
}

TM_TEST("sample: top_k keeps the k largest and boundary ties") {
    tmill::sampling_params p;
    p.top_k = 2;
    auto r = run(tmill::make_top_k, p, {1.0f, 4.0f, 2.0f, 3.0f});
    CHECK_EQ(r[0], ninf);
    CHECK_EQ(r[1], 4.0f);
    CHECK_EQ(r[2], ninf);
    CHECK_EQ(r[3], 3.0f);
    r = run(tmill::make_top_k, p, {1.0f, 3.0f, 3.0f, 3.0f});  // k-th value 3 shared by three tokens
    CHECK_EQ(r[0], ninf);
    CHECK_EQ(r[1], 3.0f);
    CHECK_EQ(r[2], 3.0f);
    CHECK_EQ(r[3], 3.0f);
    p.top_k = -1;
    CHECK(tmill::make_top_k(p, shape_of(4)) == nullptr);
    p.top_k = 4;  // k ≥ vocab is a no-op
    CHECK(tmill::make_top_k(p, shape_of(4)) == nullptr);
}

TM_TEST("sample: top_p keeps tokens whose preceding mass is below p") {
    tmill::sampling_params p;
    const auto row = logits_of({0.15, 0.5, 0.05, 0.3});
    p.top_p = 0.7f;  // 0.5 (before 0) kept, 0.3 (before 0.5) kept, 0.15 (before 0.8) dropped
    auto r = run(tmill::make_top_p, p, row);
    CHECK_EQ(r[0], ninf);
    CHECK_EQ(r[1], row[1]);
    CHECK_EQ(r[2], ninf);
    CHECK_EQ(r[3], row[3]);
    p.top_p = 0.85f;
    r = run(tmill::make_top_p, p, row);
    CHECK_EQ(r[0], row[0]);
    CHECK_EQ(r[2], ninf);
    p.top_p = 0.45f;  // the top token is always kept
    r = run(tmill::make_top_p, p, row);
    CHECK_EQ(r[1], row[1]);
    CHECK_EQ(r[0], ninf);
    CHECK_EQ(r[3], ninf);
}

TM_TEST("sample: top_p beyond the first partial-sort window") {
    tmill::sampling_params p;
    p.top_p = 0.5f;
    std::vector<float> row(1000, 0.0f);  // uniform: exactly 500 tokens have preceding mass < 0.5
    row[7] = ninf;                       // masked tokens carry no mass
    auto r = run(tmill::make_top_p, p, row);
    int kept = 0;
    for (float v : r) kept += v != ninf;
    CHECK_EQ(kept, 500);
}

TM_TEST("sample: min_p drops tokens below min_p x top probability") {
    tmill::sampling_params p;
    p.min_p = 0.4f;  // threshold 0.2
    const auto row = logits_of({0.5, 0.3, 0.15, 0.05});
    auto r = run(tmill::make_min_p, p, row);
    CHECK_EQ(r[0], row[0]);
    CHECK_EQ(r[1], row[1]);
    CHECK_EQ(r[2], ninf);
    CHECK_EQ(r[3], ninf);
}

TM_TEST("sample: repetition_penalty divides positive and multiplies negative logits") {
    tmill::sampling_params p;
    p.repetition_penalty = 2.0f;
    // prompt has token 0, output has token 1; tokens 2 and 3 untouched
    auto r = run(tmill::make_repetition_penalty, p, {2.0f, -1.0f, 3.0f, 0.5f}, {0, 0}, {1});
    CHECK_NEAR(r[0], 1.0, 1e-7);
    CHECK_NEAR(r[1], -2.0, 1e-7);
    CHECK_NEAR(r[2], 3.0, 1e-7);
    CHECK_NEAR(r[3], 0.5, 1e-7);
}

TM_TEST("sample: frequency and presence penalties count output tokens only") {
    tmill::sampling_params p;
    p.frequency_penalty = 0.5f;
    auto r = run(tmill::make_frequency_penalty, p, {1.0f, 1.0f, 1.0f, 1.0f}, {0, 0, 0}, {2, 2, 3, 2});
    CHECK_NEAR(r[0], 1.0, 1e-7);  // prompt-only token: no penalty
    CHECK_NEAR(r[2], -0.5, 1e-7);
    CHECK_NEAR(r[3], 0.5, 1e-7);
    tmill::sampling_params q;
    q.presence_penalty = -0.5f;
    r = run(tmill::make_presence_penalty, q, {1.0f, 1.0f, 1.0f, 1.0f}, {0}, {2, 2, 3});
    CHECK_NEAR(r[0], 1.0, 1e-7);
    CHECK_NEAR(r[1], 1.0, 1e-7);
    CHECK_NEAR(r[2], 1.5, 1e-7);
    CHECK_NEAR(r[3], 1.5, 1e-7);
}

TM_TEST("sample: logit_bias adds clamped biases") {
    const auto make_logit_bias = [](const tmill::sampling_params & p, const tmill::request_shape & shape) {
        return tmill::make_logit_bias(p, shape);
    };
    tmill::sampling_params p;
    p.logit_bias = {{1, 150.0f}, {2, -3.0f}, {0, -1000.0f}};
    auto r = run(make_logit_bias, p, {1.0f, 1.0f, 1.0f});
    CHECK_NEAR(r[0], -99.0, 1e-5);
    CHECK_NEAR(r[1], 101.0, 1e-5);
    CHECK_NEAR(r[2], -2.0, 1e-6);
    // A repeated id keeps its last bias, in any order (the last of {2: 5, 2: -3} is -3).
    p.logit_bias = {{2, 5.0f}, {0, 4.0f}, {1, 150.0f}, {0, 1.0f}, {2, -3.0f}};
    r = run(make_logit_bias, p, {1.0f, 1.0f, 1.0f});
    CHECK_NEAR(r[0], 2.0, 1e-6);
    CHECK_NEAR(r[1], 101.0, 1e-5);
    CHECK_NEAR(r[2], -2.0, 1e-6);
    p.logit_bias = {{3, 1.0f}, {-1, 1.0f}};
    CHECK_EQ(message_of([&] { tmill::make_logit_bias(p, shape_of(3)); }),
             std::string("token_id(s) [3, -1] in logit_bias contain out-of-vocab token ids. Vocabulary size: 3"));
}

TM_TEST("sample: the choices of a request share one merged logit_bias") {
    tmill::sampling_params p;
    p.logit_bias = {{2, 5.0f}, {0, 4.0f}, {2, -3.0f}};
    const tmill::request_shape shape = shape_of(3);
    tmill::request_shared shared;
    tmill::processor_ptr first = tmill::make_logit_bias(p, shape, &shared);
    CHECK(shared.logit_bias != nullptr);
    CHECK_EQ(shared.logit_bias->size(), size_t(2));   // merged: {0: 4, 2: -3}
    tmill::processor_ptr second = tmill::make_logit_bias(p, shape, &shared);
    CHECK_EQ(shared.logit_bias.use_count(), 3L);     // one list: the request's and both choices'
    for (const tmill::processor_ptr * proc : {&first, &second}) {
        std::vector<float> row = {1.0f, 1.0f, 1.0f};
        tmill::sampler_workspace ws(3);
        (*proc)->apply(row.data(), history_of({}, {}), ws);
        CHECK_NEAR(row[0], 5.0, 1e-6);
        CHECK_NEAR(row[1], 1.0, 1e-6);
        CHECK_NEAR(row[2], -2.0, 1e-6);
    }
}

TM_TEST("sample: allowed_token_ids masks everything else") {
    tmill::sampling_params p;
    p.allowed_token_ids = std::vector<int32_t>{3, 1, 3};
    auto r = run(tmill::make_allowed_token_ids, p, {5.0f, 1.0f, 2.0f, -1.0f});
    CHECK_EQ(r[0], ninf);
    CHECK_EQ(r[1], 1.0f);
    CHECK_EQ(r[2], ninf);
    CHECK_EQ(r[3], -1.0f);
    p.allowed_token_ids = std::vector<int32_t>{};
    CHECK_EQ(message_of([&] { tmill::make_allowed_token_ids(p, shape_of(4)); }),
             std::string("allowed_token_ids is not None and empty!"));
    p.allowed_token_ids = std::vector<int32_t>{4};
    CHECK_EQ(message_of([&] { tmill::make_allowed_token_ids(p, shape_of(4)); }),
             std::string("allowed_token_ids contains out-of-vocab token id!"));
}

TM_TEST("sample: bad_words bans the last token when the prefix matches the output tail") {
    tmill::sampling_params p;
    p.bad_words_token_ids = {{5}, {1, 2}, {3, 1, 4}};
    const std::vector<float> row(6, 1.0f);
    auto r = run(tmill::make_bad_words, p, row, {}, {});  // empty output: only single-token words
    CHECK_EQ(r[5], ninf);
    CHECK_EQ(r[2], 1.0f);
    r = run(tmill::make_bad_words, p, row, {}, {0, 1});
    CHECK_EQ(r[2], ninf);
    CHECK_EQ(r[4], 1.0f);
    r = run(tmill::make_bad_words, p, row, {}, {3, 1});
    CHECK_EQ(r[2], ninf);
    CHECK_EQ(r[4], ninf);
    r = run(tmill::make_bad_words, p, row, {}, {1, 0});  // prefix not at the tail
    CHECK_EQ(r[2], 1.0f);
    p.bad_words_token_ids = {{1, 9}};
    CHECK_EQ(message_of([&] { tmill::make_bad_words(p, shape_of(6)); }),
             std::string("The model vocabulary size is 6, but the following tokens were specified as bad: [9]. "
                         "All token id values should be integers satisfying: 0 <= token_id < 6."));
}

TM_TEST("sample: min_tokens masks EOS and stop ids until reached") {
    tmill::sampling_params p;
    p.min_tokens = 2;
    p.eos_token_ids = {0};
    p.stop_token_ids = {3};
    const std::vector<float> row(4, 1.0f);
    auto r = run(tmill::make_min_tokens, p, row, {}, {1});
    CHECK_EQ(r[0], ninf);
    CHECK_EQ(r[3], ninf);
    CHECK_EQ(r[1], 1.0f);
    r = run(tmill::make_min_tokens, p, row, {}, {1, 2});
    CHECK_EQ(r[0], 1.0f);
    CHECK_EQ(r[3], 1.0f);
    p.max_tokens = 1;
    CHECK_EQ(message_of([&] { tmill::make_min_tokens(p, shape_of(4)); }),
             std::string("min_tokens must be less than or equal to max_tokens=1, got 2."));
    p.min_tokens = -1;
    CHECK_EQ(message_of([&] { tmill::make_min_tokens(p, shape_of(4)); }),
             std::string("min_tokens must be greater than or equal to 0, got -1."));
}

TM_TEST("sample: validation messages match vLLM") {
    const tmill::request_shape s = shape_of(8);
    tmill::sampling_params p;
    p.top_p = 1.5f;
    CHECK_EQ(message_of([&] { tmill::make_top_p(p, s); }), std::string("top_p must be in (0, 1], got 1.5."));
    p = {};
    p.top_p = 0.0f;
    CHECK_EQ(message_of([&] { tmill::make_top_p(p, s); }), std::string("top_p must be in (0, 1], got 0.0."));
    p = {};
    p.temperature = -1.0f;
    CHECK_EQ(message_of([&] { tmill::make_temperature(p, s); }), std::string("temperature must be non-negative, got -1.0."));
    p.temperature = 2.5f;
    CHECK_EQ(message_of([&] { tmill::make_temperature(p, s); }), std::string("temperature must be in [0, 2], got 2.5."));
    p.temperature = std::numeric_limits<float>::infinity();
    CHECK_EQ(message_of([&] { tmill::make_temperature(p, s); }),
             std::string("temperature must be a finite number, got inf."));
    p = {};
    p.repetition_penalty = std::numeric_limits<float>::quiet_NaN();
    CHECK_EQ(message_of([&] { tmill::make_repetition_penalty(p, s); }),
             std::string("repetition_penalty must be a finite number, got nan."));
    p = {};
    p.top_k = -2;
    CHECK_EQ(message_of([&] { tmill::make_top_k(p, s); }),
             std::string("top_k must be 0 (disable), or at least 1, got -2."));
    p = {};
    p.min_p = 1.1f;
    CHECK_EQ(message_of([&] { tmill::make_min_p(p, s); }), std::string("min_p must be in [0, 1], got 1.1."));
    p = {};
    p.repetition_penalty = 0.0f;
    CHECK_EQ(message_of([&] { tmill::make_repetition_penalty(p, s); }),
             std::string("repetition_penalty must be greater than zero, got 0.0."));
    p = {};
    p.frequency_penalty = 2.5f;
    CHECK_EQ(message_of([&] { tmill::make_frequency_penalty(p, s); }),
             std::string("frequency_penalty must be in [-2, 2], got 2.5."));
    p = {};
    p.presence_penalty = -3.0f;
    CHECK_EQ(message_of([&] { tmill::make_presence_penalty(p, s); }),
             std::string("presence_penalty must be in [-2, 2], got -3.0."));
    p = {};
    p.presence_penalty = -3.0f;
    CHECK_THROWS_CODE(tmill::sampler(p, s), invalid_argument);
}

TM_TEST("sample: py_float formats like Python repr") {
    CHECK_EQ(tmill::py_float(1.0f), std::string("1.0"));
    CHECK_EQ(tmill::py_float(0.1f), std::string("0.1"));
    CHECK_EQ(tmill::py_float(-2.5f), std::string("-2.5"));
    CHECK_EQ(tmill::py_float(1e-5f), std::string("1e-05"));
    CHECK_EQ(tmill::py_float(0.0001f), std::string("0.0001"));
    CHECK_EQ(tmill::py_float(123456.0f), std::string("123456.0"));
    CHECK_EQ(tmill::py_float(1e20f), std::string("1e+20"));
}

TM_TEST("sample: bad_words_token_ids expands words like vLLM") {
    // A toy tokenizer: "hello" → [1], " hello" → [2], "bad word" → [3, 4], " bad word" → [5, 4],
    // "x y" → [6, 7], " x y" → [8] (different length: the spaced variant is dropped).
    auto tok = [](const std::string & s) -> std::vector<int32_t> {
        if (s == "hello") return {1};
        if (s == " hello") return {2};
        if (s == "bad word") return {3, 4};
        if (s == " bad word") return {5, 4};
        if (s == "x y") return {6, 7};
        if (s == " x y") return {8};
        if (s == "same") return {9};
        if (s == " same") return {9};
        return {};
    };
    auto ids = tmill::bad_words_token_ids({"  hello", "bad word", "x y", "same", ""}, tok);
    const std::vector<std::vector<int32_t>> expect = {{1}, {2}, {3, 4}, {5, 4}, {6, 7}, {9}};
    CHECK(ids == expect);
}
