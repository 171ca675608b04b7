// stop_checker: stop strings with hold-back over split deltas, stop tokens, EOS, length, min_tokens,
// and the reason reported; repetition detection cases from docs/http-api.md#repetition-detection.
#include "check.h"

#include "base/error.h"
#include "decode/stop-checker.h"

#include <string>
#include <vector>

namespace {

struct step {
    int32_t token;
    std::string delta;
};

// Feeds steps until finished; returns everything released and the final update.
struct run_result {
    std::vector<std::string> chunks;
    std::string text;
    tmill::stop_update last;
    int n_steps = 0;
};

run_result run(const tmill::stop_params & p, const std::vector<step> & steps, int32_t n_vocab = 100) {
    tmill::stop_checker c(p, n_vocab);
    run_result r;
    std::vector<int32_t> out;
    for (const auto & s : steps) {
        out.push_back(s.token);
        r.last = c.on_token(s.token, s.delta, out.data(), (int32_t)out.size());
        r.chunks.emplace_back(r.last.text);
        r.text += std::string(r.last.text);
        ++r.n_steps;
        if (r.last.finished) break;
    }
    return r;
}

std::vector<step> text_steps(const std::vector<std::string> & deltas) {
    std::vector<step> s;
    for (size_t i = 0; i < deltas.size(); ++i) s.push_back({(int32_t)(10 + i), deltas[i]});
    return s;
}

} // namespace

TM_TEST("decode: stop string split across deltas is held back and cut") {
    tmill::stop_params p;
    p.stop = {"END"};
    auto r = run(p, text_steps({"Hello E", "N", "D more", "never"}));
    CHECK_EQ(r.chunks[0], std::string("Hello "));
    CHECK_EQ(r.chunks[1], std::string(""));
    CHECK(r.last.finished);
    CHECK(r.last.reason == tmill::finish_reason::stop);
    CHECK(r.last.stop_kind == tmill::stop_reason_kind::string);
    CHECK_EQ(std::string(r.last.stop_string), std::string("END"));
    CHECK_EQ(r.text, std::string("Hello "));
    CHECK_EQ(r.n_steps, 3);
}

TM_TEST("decode: a partial match that fails is released") {
    tmill::stop_params p;
    p.stop = {"END"};
    auto r = run(p, text_steps({"abc E", "Nx", " tail"}));
    CHECK_EQ(r.chunks[0], std::string("abc "));
    CHECK_EQ(r.chunks[1], std::string("ENx"));
    CHECK_EQ(r.chunks[2], std::string(" tail"));
    CHECK(!r.last.finished);
    // "EEND": the held "E" is not the match start; the second E is
    r = run(p, text_steps({"xE", "E", "ND!"}));
    CHECK_EQ(r.text, std::string("xE"));
    CHECK(r.last.finished);
}

TM_TEST("decode: include_stop_str_in_output keeps the stop string and cuts after it") {
    tmill::stop_params p;
    p.stop = {"STOP"};
    p.include_stop_str_in_output = true;
    auto r = run(p, text_steps({"foo ST", "OP bar"}));
    CHECK_EQ(r.chunks[0], std::string("foo ST"));  // nothing held: the string is output anyway
    CHECK_EQ(r.text, std::string("foo STOP"));
    CHECK_EQ(std::string(r.last.stop_string), std::string("STOP"));
}

TM_TEST("decode: multibyte stop strings") {
    tmill::stop_params p;
    p.stop = {"\xC3\xA9!"};  // "é!"
    auto r = run(p, text_steps({"caf\xC3\xA9", "!", "x"}));
    CHECK_EQ(r.chunks[0], std::string("caf"));  // the whole "é" is held, never half of it
    CHECK_EQ(r.text, std::string("caf"));
    CHECK(r.last.finished);
    tmill::stop_params q;
    q.stop = {"\xE6\x97\xA5\xE6\x9C\xAC"};  // "日本"
    r = run(q, text_steps({"\xE4\xBB\x8A\xE6\x97\xA5", "\xE3\x81\xAF"}));  // "今日", "は": no match
    CHECK_EQ(r.chunks[0], std::string("\xE4\xBB\x8A"));
    CHECK_EQ(r.text, std::string("\xE4\xBB\x8A\xE6\x97\xA5\xE3\x81\xAF"));
    CHECK(!r.last.finished);
}

TM_TEST("decode: the first stop string in list order wins") {
    tmill::stop_params p;
    p.stop = {"b", "a"};
    auto r = run(p, text_steps({"xab"}));
    CHECK_EQ(std::string(r.last.stop_string), std::string("b"));
    CHECK_EQ(r.text, std::string("xa"));
}

TM_TEST("decode: stop token ids and EOS") {
    tmill::stop_params p;
    p.stop_token_ids = {7};
    p.eos_token_ids = {2};
    auto r = run(p, {{5, "a"}, {7, "<s7>"}});
    CHECK(r.last.finished);
    CHECK(r.last.reason == tmill::finish_reason::stop);
    CHECK(r.last.stop_kind == tmill::stop_reason_kind::token);
    CHECK_EQ(r.last.stop_token, 7);
    CHECK_EQ(r.text, std::string("a"));
    r = run(p, {{5, "a"}, {2, "</s>"}});
    CHECK(r.last.finished);
    CHECK(r.last.stop_kind == tmill::stop_reason_kind::none);  // EOS: stop_reason null
    CHECK_EQ(r.text, std::string("a"));
    p.include_stop_str_in_output = true;
    r = run(p, {{5, "a"}, {7, "<s7>"}});
    CHECK_EQ(r.text, std::string("a<s7>"));
    p.include_stop_str_in_output = false;
    p.ignore_eos = true;  // EOS no longer ends generation; stop ids still do
    r = run(p, {{2, "</s>"}, {5, "a"}, {7, ""}});
    CHECK_EQ(r.n_steps, 3);
    CHECK_EQ(r.text, std::string("</s>a"));
    CHECK_EQ(r.last.stop_token, 7);
}

TM_TEST("decode: length from max_tokens and context end, with held text released") {
    tmill::stop_params p;
    p.max_tokens = 3;
    p.stop = {"xyz"};
    auto r = run(p, text_steps({"a", "b", "cx", "d"}));
    CHECK_EQ(r.n_steps, 3);
    CHECK(r.last.reason == tmill::finish_reason::length);
    CHECK(r.last.stop_kind == tmill::stop_reason_kind::none);
    CHECK_EQ(r.chunks[2], std::string("cx"));  // held "x" is released at the finish
    tmill::stop_params q;
    q.n_prompt = 8;
    q.max_model_len = 10;
    r = run(q, text_steps({"a", "b", "c"}));
    CHECK_EQ(r.n_steps, 2);
    CHECK(r.last.reason == tmill::finish_reason::length);
}

TM_TEST("decode: a stop string in the last step beats length") {
    tmill::stop_params p;
    p.max_tokens = 2;
    p.stop = {"!"};
    auto r = run(p, text_steps({"a", "b!c"}));
    CHECK(r.last.reason == tmill::finish_reason::stop);
    CHECK_EQ(r.text, std::string("ab"));
}

TM_TEST("decode: min_tokens suppresses every stop before it is reached") {
    tmill::stop_params p;
    p.min_tokens = 2;
    p.stop_token_ids = {7};
    p.eos_token_ids = {2};
    p.stop = {"ab"};
    auto r = run(p, {{7, "ab"}, {2, "c"}, {5, "d"}, {7, "e"}});
    // token 1 (a stop id, and text "ab") is ignored; token 2 is EOS at n_output == min_tokens → stops
    CHECK_EQ(r.n_steps, 2);
    CHECK(r.last.stop_kind == tmill::stop_reason_kind::none);
    CHECK_EQ(r.text, std::string("ab"));  // "ab" appeared before min_tokens and never matches
    tmill::stop_params q;
    q.min_tokens = 1;
    q.stop = {"ab"};
    r = run(q, text_steps({"a", "b", "c"}));  // the match ends in token 2's text: it counts
    CHECK_EQ(r.n_steps, 2);
    CHECK_EQ(r.text, std::string(""));
}

TM_TEST("decode: stop validation messages") {
    tmill::stop_params p;
    p.stop = {"a", ""};
    try {
        tmill::stop_checker c(p, 10);
        CHECK(false);
    } catch (const tmill::error & e) {
        CHECK_EQ(std::string(e.what()), std::string("stop cannot contain an empty string."));
    }
    tmill::stop_params q;
    q.stop_token_ids = {3, 10, 12};
    try {
        tmill::stop_checker c(q, 10);
        CHECK(false);
    } catch (const tmill::error & e) {
        CHECK_EQ(std::string(e.what()),
                 std::string("token_id(s) [10, 12] in stop_token_ids contain out-of-vocab token ids. Vocabulary size: 10"));
    }
    tmill::stop_params m;
    m.max_tokens = 0;
    CHECK_THROWS_CODE(tmill::stop_checker(m, 10), invalid_argument);
}

TM_TEST("decode: repetition detection is tail-anchored (docs/http-api.md#repetition-detection)") {
    tmill::repetition_params p{2, 1, 2};
    std::vector<int32_t> a = {9, 1, 2, 1, 2};
    CHECK(tmill::has_repetition(a.data(), (int32_t)a.size(), p));
    std::vector<int32_t> b = {1, 2, 1, 2, 3};
    CHECK(!tmill::has_repetition(b.data(), (int32_t)b.size(), p));
    std::vector<int32_t> c = {4, 4};
    CHECK(tmill::has_repetition(c.data(), 2, p));
    tmill::repetition_params three{3, 3, 3};  // only 3-token patterns, three times
    std::vector<int32_t> d = {1, 2, 3, 1, 2, 3, 1, 2, 3};
    CHECK(tmill::has_repetition(d.data(), 9, three));
    CHECK(!tmill::has_repetition(d.data(), 8, three));
    std::vector<int32_t> e = {5, 5, 5, 5, 5, 5, 5, 5, 5};  // a 1-token loop also repeats as [5,5,5] x 3
    CHECK(tmill::has_repetition(e.data(), 9, three));
    tmill::repetition_params min_two{4, 2, 2};  // 1-token repeats are below min_pattern_size
    std::vector<int32_t> f = {1, 2, 3, 3};
    CHECK(!tmill::has_repetition(f.data(), 4, min_two));
    tmill::repetition_params off{};
    CHECK(!tmill::has_repetition(e.data(), 9, off));
    CHECK(!tmill::has_repetition(e.data(), 0, p));
}

TM_TEST("decode: repetition validation and finish reason") {
    CHECK_THROWS_CODE(tmill::validate_repetition_params({2, 3, 2}), invalid_argument);
    CHECK_THROWS_CODE(tmill::validate_repetition_params({-1, 0, 0}), invalid_argument);
    try {
        tmill::validate_repetition_params({2, 0, 1});
        CHECK(false);
    } catch (const tmill::error & e) {
        CHECK_EQ(std::string(e.what()),
                 std::string("min_count must be >= 2 to detect repetitive patterns in engine output. If you do not "
                             "wish to detect repetitive patterns, set max_pattern_size to 0."));
    }
    tmill::validate_repetition_params({0, 0, 0});  // off is valid

    tmill::stop_params p;
    p.repetition = {2, 0, 3};
    p.eos_token_ids = {2};
    auto r = run(p, {{1, "x"}, {1, "x"}, {1, "x"}, {1, "x"}});
    CHECK_EQ(r.n_steps, 3);
    CHECK(r.last.reason == tmill::finish_reason::repetition);
    CHECK_EQ(std::string(r.last.stop_string), std::string("repetition_detected"));
    CHECK_EQ(r.text, std::string("xxx"));  // the repeats stay in the output
    r = run(p, {{2, ""}, {2, ""}, {2, ""}});  // EOS is checked before repetition
    CHECK_EQ(r.n_steps, 1);
    CHECK(r.last.reason == tmill::finish_reason::stop);
    tmill::stop_params q = p;
    q.max_tokens = 3;  // length is checked before repetition
    r = run(q, {{1, "x"}, {1, "x"}, {1, "x"}});
    CHECK(r.last.reason == tmill::finish_reason::length);
    CHECK_EQ(std::string(tmill::finish_reason_name(r.last.reason)), std::string("length"));
}
