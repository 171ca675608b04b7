// Detokenizer: token pieces, vLLM's skip_special_tokens / spaces_between_special_tokens, SPM's leading
// space, UTF-8 held back across tokens, U+FFFD for bytes that cannot complete, and incremental ==
// whole-sequence on random id streams.
#include "check.h"

#include <cstdint>
#include <string>
#include <vector>

#include "tokenizer-test-util.h"
#include "tokenizer/detokenizer.h"

using tmill::tok::detok_options;
using tmill::tok::incremental_detokenizer;

TM_TEST("detokenizer: token_to_piece") {
    const auto spm = tok_test::load_vocab("llama-spm");
    CHECK_EQ(spm->token_to_piece(15043), " Hello");
    CHECK_EQ(spm->token_to_piece(3 + 0xE2), std::string("\xE2"));
    CHECK_EQ(spm->token_to_piece(1), "<s>");
    const auto q = tok_test::load_vocab("qwen2");
    CHECK_EQ(q->token_to_piece(15588), " hi");
    CHECK_EQ(q->token_to_piece(151644), "<|im_start|>");
    CHECK_EQ(q->token_text(15588), "Ġhi");
}

TM_TEST("detokenizer: skip_special_tokens and spaces_between_special_tokens") {
    const auto q = tok_test::load_vocab("qwen2");
    const std::vector<int32_t> ids = {151644, 872, 198, 15588, 151645};  // <|im_start|>user\n hi<|im_end|>
    CHECK_EQ(q->detokenize(ids.data(), ids.size(), {true, true}), "user\n hi");
    CHECK_EQ(q->detokenize(ids.data(), ids.size(), {true, false}), "user\n hi");
    CHECK_EQ(q->detokenize(ids.data(), ids.size(), {false, false}), "<|im_start|>user\n hi<|im_end|>");
    // As vLLM's fast detokenizer: no spaces are inserted around added tokens either way.
    CHECK_EQ(q->detokenize(ids.data(), ids.size(), {false, true}), "<|im_start|>user\n hi<|im_end|>");
    const std::vector<int32_t> two = {151644, 151645};
    CHECK_EQ(q->detokenize(two.data(), two.size(), {false, true}), "<|im_start|><|im_end|>");
    CHECK_EQ(q->detokenize(two.data(), two.size(), {true, true}), "");
}

TM_TEST("detokenizer: SPM leading space") {
    const auto v = tok_test::load_vocab("llama-spm");
    const std::vector<int32_t> a = {15043, 15043};
    CHECK_EQ(v->detokenize(a.data(), a.size(), {true, true}), "Hello Hello");
    const std::vector<int32_t> b = {1, 15043};
    CHECK_EQ(v->detokenize(b.data(), b.size(), {true, true}), "Hello");
    CHECK_EQ(v->detokenize(b.data(), b.size(), {false, false}), "<s> Hello");
    // Only the first space of the output goes: "▁▁Hello" style input keeps the second.
    const auto ids = v->tokenize("  Hello", false, false);
    CHECK_EQ(v->detokenize(ids.data(), ids.size(), {true, true}), "  Hello");
    // A BPE vocab keeps every space.
    const auto q = tok_test::load_vocab("qwen2");
    const std::vector<int32_t> c = {15588};
    CHECK_EQ(q->detokenize(c.data(), c.size(), {true, true}), " hi");
}

TM_TEST("detokenizer: an output continuing a prompt with text keeps its first SPM space") {
    const auto v = tok_test::load_vocab("llama-spm");
    const std::vector<int32_t> bos = {1}, text = {1, 15043};   // <s>, <s> "▁Hello"
    incremental_detokenizer fresh(*v, {true, true});
    fresh.continue_after(bos.data(), bos.size());                 // only a special token: nothing to continue
    CHECK_EQ(std::string(fresh.push(15043)), "Hello");
    incremental_detokenizer after(*v, {true, true});
    after.continue_after(text.data(), text.size());
    CHECK_EQ(std::string(after.push(15043)), " Hello");
    CHECK(!tmill::tok::holds_text(*v, bos.data(), bos.size()));
    CHECK(tmill::tok::holds_text(*v, text.data(), text.size()));
}

TM_TEST("detokenizer: partial code points are held back") {
    const auto v = tok_test::load_vocab("llama-spm");
    incremental_detokenizer d(*v, {true, true});
    // "▁" then the four bytes of U+1F999.
    CHECK_EQ(std::string(d.push(29871)), "");  // the leading space of the output is dropped
    CHECK_EQ(std::string(d.push(3 + 0xF0)), "");
    CHECK_EQ(std::string(d.push(3 + 0x9F)), "");
    CHECK_EQ(std::string(d.push(3 + 0xA6)), "");
    CHECK_EQ(std::string(d.push(3 + 0x99)), "\xF0\x9F\xA6\x99");
    CHECK_EQ(std::string(d.flush()), "");
}

TM_TEST("detokenizer: bytes that cannot complete become U+FFFD") {
    const auto v = tok_test::load_vocab("llama-spm");
    {
        incremental_detokenizer d(*v, {true, true});
        CHECK_EQ(std::string(d.push(3 + 0xF0)), "");
        CHECK_EQ(std::string(d.push(3 + 0x9F)), "");
        CHECK_EQ(std::string(d.flush()), "\xEF\xBF\xBD");  // one U+FFFD for the unfinished sequence
    }
    {
        incremental_detokenizer d(*v, {true, true});
        CHECK_EQ(std::string(d.push(3 + 0xFF)), "\xEF\xBF\xBD");    // never valid
        CHECK_EQ(std::string(d.push(3 + 0xE2)), "");
        CHECK_EQ(std::string(d.push(3 + 'A')), "\xEF\xBF\xBD" "A");  // E2 then 'A': broken
        CHECK_EQ(std::string(d.push(3 + 0x80)), "\xEF\xBF\xBD");    // stray continuation byte
        CHECK_EQ(std::string(d.push(3 + 0xED)), "");
        CHECK_EQ(std::string(d.push(3 + 0xA0)), "\xEF\xBF\xBD\xEF\xBF\xBD");  // surrogate: ED, then A0
        d.reset();
        CHECK_EQ(std::string(d.push(3 + 'x')), "x");
    }
}

TM_TEST("detokenizer: incremental equals whole on random ids") {
    for (const char * name : {"qwen2", "llama-spm", "gpt-2"}) {
        const auto v = tok_test::load_vocab(name);
        uint64_t state = 0x9E3779B97F4A7C15ull;
        auto next = [&]() { state = state * 6364136223846793005ull + 1442695040888963407ull; return uint32_t(state >> 33); };
        for (int round = 0; round < 200; ++round) {
            std::vector<int32_t> ids(1 + next() % 24);
            for (auto & id : ids) {
                // Mostly low ids (byte-ish tokens), some anywhere (specials included).
                id = int32_t(next() % 4 == 0 ? next() % uint32_t(v->n_tokens()) : next() % 600);
            }
            for (int o = 0; o < 4; ++o) {
                const detok_options opt{(o & 1) != 0, (o & 2) != 0};
                const std::string whole = v->detokenize(ids.data(), ids.size(), opt);
                incremental_detokenizer d(*v, opt);
                std::string inc;
                bool all_valid = true;
                for (int32_t id : ids) {
                    const std::string delta(d.push(id));
                    all_valid = all_valid && tok_test::valid_utf8(delta);
                    inc += delta;
                }
                const std::string tail(d.flush());
                all_valid = all_valid && tok_test::valid_utf8(tail);
                inc += tail;
                CHECK_EQ(inc, whole);
                CHECK(all_valid);
                CHECK(tok_test::valid_utf8(whole));
            }
        }
    }
}
