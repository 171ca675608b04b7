// Grammar token masks on real vocabularies (../shared/models/vocab): the trie walk agrees with
// accepting each token's bytes, allowed tokens keep the text a valid prefix, rejected ones would not,
// and the SPM first-space rule follows the detokenizer. Prints the mask time (no assertion on it).
#include "check.h"
#include "tokenizer-test-util.h"

#include "grammar/matcher.h"
#include "sample/rng.h"
#include "sample/sampler.h"

#include <cmath>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

using namespace tmill::grammar;

namespace {

const char * k_json =
    "root   ::= object\n"
    "value  ::= object | array | string | number | (\"true\" | \"false\" | \"null\") ws\n"
    "object ::= \"{\" ws ( string \":\" ws value (\",\" ws string \":\" ws value)* )? \"}\" ws\n"
    "array  ::= \"[\" ws ( value (\",\" ws value)* )? \"]\" ws\n"
    "string ::= \"\\\"\" ( [^\"\\\\\\x7F\\x00-\\x1F] | \"\\\\\" ([\"\\\\/bfnrt] | \"u\" [0-9a-fA-F]{4}) )* \"\\\"\" ws\n"
    "number ::= (\"-\"? ([0-9] | [1-9] [0-9]{0,15})) (\".\" [0-9]+)? ([eE] [-+]? [0-9] [1-9]{0,15})? ws\n"
    "ws     ::= | \" \" | \"\\n\" [ \\t]{0,20}\n";

// Every token: the mask bit equals "a copy of the matcher accepts the token's bytes".
void check_mask_consistent(const matcher & m, const token_trie & trie, int32_t & n_allowed) {
    std::vector<uint8_t> allowed((size_t)trie.n_vocab());
    matcher probe = m;
    n_allowed = probe.fill_mask(allowed.data());
    int32_t count = 0, mismatches = 0;
    for (int32_t t = 0; t < trie.n_vocab(); ++t) {
        matcher c = m;
        const bool ok = c.accept_token(t);
        if (ok != (allowed[size_t(t)] != 0)) ++mismatches;
        count += allowed[size_t(t)];
    }
    CHECK_EQ(mismatches, 0);
    CHECK_EQ(count, n_allowed);
}

double mask_ms(matcher & m, int32_t n_vocab, int reps) {
    std::vector<uint8_t> allowed((size_t)n_vocab);
    const auto t0 = std::chrono::steady_clock::now();
    for (int k = 0; k < reps; ++k) m.fill_mask(allowed.data());
    const auto t1 = std::chrono::steady_clock::now();
    return std::chrono::duration<double, std::milli>(t1 - t0).count() / reps;
}

} // namespace

TM_TEST("grammar: mask for yes|no on the llama SPM vocab follows the detokenizer") {
    auto v = tok_test::load_vocab("llama-spm");
    auto cg = compile_grammar("root ::= \"yes\" | \"no\"", v);
    matcher m(cg);
    std::vector<uint8_t> allowed((size_t)v->n_tokens());
    const int32_t n = m.fill_mask(allowed.data());
    CHECK(n > 0);
    // Independent oracle: the visible text of a first token (leading space dropped, as the
    // detokenizer does) must be a non-empty... or empty prefix of "yes" or "no".
    int32_t expected = 0;
    for (int32_t t = 0; t < v->n_tokens(); ++t) {
        if (v->is_special(t) || v->get_type(t) == tmill::tok::token_type::unused) {
            CHECK(!allowed[size_t(t)]);
            continue;
        }
        const std::string text = v->detokenize(&t, 1, tmill::tok::detok_options{});
        std::string raw;
        v->append_piece(t, raw);
        if (raw.empty()) { CHECK(!allowed[size_t(t)]); continue; }
        const bool ok = std::string("yes").compare(0, text.size(), text) == 0 || std::string("no").compare(0, text.size(), text) == 0;
        const bool valid_utf8 = tok_test::valid_utf8(raw) || raw.size() == 1;  // byte tokens: checked by the matcher
        if (!valid_utf8) continue;
        if (ok != (allowed[size_t(t)] != 0)) {
            CHECK_EQ(std::string(text), std::string(allowed[size_t(t)] ? "<allowed>" : "<rejected>"));
        }
        expected += ok ? 1 : 0;
    }
    CHECK(expected > 0);
    const int32_t yes = v->text_to_token("▁yes");
    const int32_t y = v->text_to_token("▁y");
    const int32_t no = v->text_to_token("no");
    CHECK(yes >= 0 && allowed[size_t(yes)]);
    CHECK(y >= 0 && allowed[size_t(y)]);
    CHECK(no >= 0 && allowed[size_t(no)]);
    CHECK(!allowed[size_t(v->text_to_token("▁maybe"))]);
    CHECK(!allowed[size_t(v->eos())]);  // special tokens never; EOS is the processor's decision
    // After "▁y" the leading-space rule is spent: "▁es" is rejected, "es" accepted.
    CHECK(m.accept_token(y));
    std::fill(allowed.begin(), allowed.end(), 0);
    m.fill_mask(allowed.data());
    CHECK(allowed[size_t(v->text_to_token("es"))]);
    CHECK(!allowed[size_t(v->text_to_token("▁es"))]);
    CHECK(!m.can_end());
    CHECK(m.accept_token(v->text_to_token("es")));
    CHECK(m.can_end());
    CHECK(m.is_complete());
    CHECK_EQ(m.fill_mask(allowed.data()), 0);
}

TM_TEST("grammar: JSON masks agree with accepting every token (SPM, byte fallback)") {
    auto v = tok_test::load_vocab("llama-spm");
    auto cg = compile_grammar(k_json, v);
    matcher m(cg);
    int32_t n = 0;
    check_mask_consistent(m, *cg->trie, n);
    CHECK(n > 0);
    // Walk into a string with a multi-byte character split across byte-fallback tokens.
    for (const char * s : {"{", "\"", "na", "me"}) CHECK(m.accept_token(v->text_to_token(s)));
    check_mask_consistent(m, *cg->trie, n);
    CHECK(n > 20000);  // inside a string nearly everything goes
    CHECK(m.accept_token(v->byte_to_token(0xF0)));
    CHECK(m.accept_token(v->byte_to_token(0x9F)));
    check_mask_consistent(m, *cg->trie, n);   // mid-code-point: only continuations
    CHECK(n > 0 && n < 200);
    CHECK(!matcher(m).accept_token(v->text_to_token("a")));
    CHECK(m.accept_token(v->byte_to_token(0x98)));
    CHECK(m.accept_token(v->byte_to_token(0x80)));
    for (const char * s : {"\":", "▁", "1", "2", "}"}) CHECK(m.accept_token(v->text_to_token(s)));
    CHECK(m.can_end());
    check_mask_consistent(m, *cg->trie, n);
    // Only whitespace may follow the closing brace.
    std::vector<uint8_t> allowed((size_t)v->n_tokens());
    m.fill_mask(allowed.data());
    for (int32_t t = 0; t < v->n_tokens(); ++t) {
        if (!allowed[size_t(t)]) continue;
        const std::string p(cg->trie->piece(t));
        CHECK(p.find_first_not_of(" \t\n") == std::string::npos);
    }
}

TM_TEST("grammar: JSON masks agree with accepting every token (byte-level BPE)") {
    auto v = tok_test::load_vocab("llama-bpe");
    auto cg = compile_grammar(k_json, v);
    CHECK(!cg->trie->strip_first_space());
    matcher m(cg);
    int32_t n = 0;
    check_mask_consistent(m, *cg->trie, n);
    const std::vector<int32_t> ids = v->tokenize("{\"key\": [1, \"é\"", false, false);
    for (int32_t id : ids) CHECK(m.accept_token(id));
    check_mask_consistent(m, *cg->trie, n);
    CHECK(n > 0);
    CHECK(!m.can_end());
}

TM_TEST("grammar: masks over more than 64 stacks (no per-level memo) agree with accepting every token") {
    auto v = tok_test::load_vocab("llama-spm");
    auto cg = compile_grammar("root ::= s\ns ::= \"a\" s p | \"a\" s q | \"a\"\np ::= \"b\"?\nq ::= \"c\"?", v);
    matcher m(cg);
    for (int k = 0; k < 7; ++k) CHECK(m.accept_bytes("a"));
    CHECK(m.n_stacks() > 64);
    int32_t n = 0;
    check_mask_consistent(m, *cg->trie, n);
    CHECK(n > 0);
    CHECK(m.accept_bytes("bc"));
    check_mask_consistent(m, *cg->trie, n);
}

TM_TEST("grammar: mask timing on a 32000-token vocabulary (printed)") {
    auto v = tok_test::load_vocab("llama-spm");
    auto cg = compile_grammar(k_json, v);
    matcher m(cg);
    const double t_start = mask_ms(m, v->n_tokens(), 20);
    for (const char * s : {"{", "\"", "na"}) CHECK(m.accept_token(v->text_to_token(s)));
    const double t_string = mask_ms(m, v->n_tokens(), 20);
    for (const char * s : {"\":", "▁"}) CHECK(m.accept_token(v->text_to_token(s)));
    const double t_value = mask_ms(m, v->n_tokens(), 20);
    std::printf("  grammar mask (JSON, llama-spm 32000): start %.3f ms, in string %.3f ms, value %.3f ms\n",
                t_start, t_string, t_value);
    const auto c0 = std::chrono::steady_clock::now();
    tmill::grammar::token_trie fresh(*v);
    const auto c1 = std::chrono::steady_clock::now();
    for (int k = 0; k < 20; ++k) CHECK(compile_grammar(k_json, v)->trie == cg->trie);   // cached per vocabulary
    const auto c2 = std::chrono::steady_clock::now();
    std::printf("  grammar compile: vocabulary trie %.2f ms (once per vocabulary), JSON grammar %.3f ms\n",
                std::chrono::duration<double, std::milli>(c1 - c0).count(),
                std::chrono::duration<double, std::milli>(c2 - c1).count() / 20);
    CHECK_EQ(fresh.nodes().size(), cg->trie->nodes().size());
    CHECK(t_start > 0.0);
}

TM_TEST("grammar: sampler with a grammar mask only produces grammar text, then EOS") {
    auto v = tok_test::load_vocab("llama-spm");
    const int32_t n_vocab = v->n_tokens();
    tmill::sampler_workspace ws(n_vocab);
    std::vector<float> logits((size_t)n_vocab), row((size_t)n_vocab);
    const std::string g = "root ::= \"{\" pair (\", \" pair){0,2} \"}\"\npair ::= \"\\\"\" [a-z]{1,8} \"\\\": \" [0-9]{1,3}";
    int32_t n_done = 0;
    for (int seed = 1; seed <= 6; ++seed) {
        tmill::sampling_params p;
        p.temperature = seed % 3 == 0 ? 0.0f : 1.0f;
        p.has_seed = true;
        p.seed = seed;
        p.logprobs = true;
        p.eos_token_ids = v->eog_ids();
        p.grammar = compile_grammar(g, v);
        tmill::request_shape shape;
        shape.n_vocab = n_vocab;
        shape.max_output = 200;
        tmill::sampler smp(p, shape);
        tmill::rng noise((uint64_t)seed, 7);
        std::vector<int32_t> out;
        matcher check(p.grammar);
        bool ended = false;
        for (int step = 0; step < 200 && !ended; ++step) {
            // Model-like logits: random, with EOS favoured so an unconstrained run would stop at once.
            for (auto & x : logits) x = float(noise.next_double() * 8.0);
            logits[(size_t)v->eos()] = 20.0f;
            row = logits;
            tmill::token_history h;
            h.output = out.data();
            h.n_output = (int32_t)out.size();
            const tmill::sample_result r = smp.sample(row.data(), h, ws);
            CHECK(std::isfinite(r.logprob));   // logprobs come from the masked distribution
            if (r.token == v->eos()) {
                CHECK(check.can_end());
                ended = true;
                break;
            }
            CHECK(check.accept_token(r.token));
            out.push_back(r.token);
        }
        CHECK(ended);
        const std::string text = v->detokenize(out.data(), out.size(), tmill::tok::detok_options{});
        CHECK(text.size() >= 12 && text.front() == '{' && text.back() == '}');
        n_done += ended ? 1 : 0;
    }
    CHECK_EQ(n_done, 6);
}

TM_TEST("grammar: a grammar too ambiguous to follow fails the sequence with a reason, allowing only EOS") {
    auto v = tok_test::load_vocab("llama-spm");
    const int32_t n_vocab = v->n_tokens();
    tmill::sampler_workspace ws(n_vocab);
    std::vector<float> row((size_t)n_vocab);
    tmill::sampling_params p;
    p.temperature = 0.0f;
    p.eos_token_ids = v->eog_ids();
    // Every "a" opens a level closed by p or q: 2^k distinct stacks after k letters.
    p.grammar = compile_grammar("root ::= s\ns ::= \"a\" s p | \"a\" s q | \"a\"\np ::= \"b\"?\nq ::= \"c\"?", v);
    tmill::request_shape shape;
    shape.n_vocab = n_vocab;
    shape.max_output = 100;
    tmill::sampler smp(p, shape);
    const int32_t a = v->text_to_token("a");
    CHECK(a >= 0);
    std::vector<int32_t> out;
    int32_t steps = 0;
    for (; steps < 40 && smp.failure() == nullptr; ++steps) {
        std::fill(row.begin(), row.end(), 0.0f);
        row[(size_t)a] = 10.0f;                 // the "model" wants more "a"s
        row[(size_t)v->eos()] = 5.0f;
        tmill::token_history h;
        const tmill::sample_result r = smp.sample(row.data(), h, ws);
        if (smp.failure() != nullptr) {
            CHECK_EQ(r.token, v->eos());        // only EOS was left
            break;
        }
        CHECK_EQ(r.token, a);
        out.push_back(r.token);
    }
    CHECK(smp.failure() != nullptr);
    CHECK(std::string(smp.failure() ? smp.failure() : "").find("too ambiguous") != std::string::npos);
    // 2^11 = 2048 stacks: it fails once some token (runs of "a" are tokens too) would pass the cap.
    CHECK(out.size() >= 2 && out.size() <= 11);
    std::printf("  ambiguous grammar failed after %d letters\n", (int)out.size());
    // Without a grammar nothing fails.
    tmill::sampling_params plain;
    tmill::sampler free(plain, shape);
    CHECK(free.failure() == nullptr);
}
