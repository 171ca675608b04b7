// Tokenizer edge cases: special-token partition, BOS/EOS, SPM space prefix and byte fallback, BPE merge
// order on a synthetic vocab, invalid UTF-8, metadata errors, and a speed guard.
#include "check.h"

#include <chrono>
#include <vector>

#include "base/error.h"
#include "tokenizer-test-util.h"

using tmill::tok::vocab;
using tmill::tok::vocab_spec;
using ids_t = std::vector<int32_t>;

TM_TEST("tokenizer: control tokens only with parse_special") {
    const auto v = tok_test::load_vocab("qwen2");
    const std::string text = "<|im_start|>user hi<|im_end|>";
    CHECK_EQ(v->tokenize(text, false, true) == ids_t({151644, 872, 15588, 151645}), true);
    const auto plain = v->tokenize(text, false, false);
    for (int32_t id : plain) CHECK(!v->is_special(id));
    CHECK_EQ(v->detokenize(plain.data(), plain.size(), {true, true}), text);
}

TM_TEST("tokenizer: user-defined tokens are matched without parse_special") {
    const auto v = tok_test::load_vocab("deepseek-coder");
    // (The FIM tokens are USER_DEFINED in the file too, but llama.cpp makes them CONTROL on load.)
    const int32_t user = v->text_to_token("<|User|>");
    CHECK(user >= 0);
    CHECK(v->get_type(user) == tmill::tok::token_type::user_defined);
    const auto ids = v->tokenize("<|User|>x", false, false);
    CHECK(!ids.empty());
    if (!ids.empty()) CHECK_EQ(ids[0], user);
}

TM_TEST("tokenizer: add_special follows the vocab flags") {
    const auto spm = tok_test::load_vocab("llama-spm");
    CHECK(spm->tokenize("Hello", true, false) == ids_t({1, 15043}));
    CHECK(spm->tokenize("Hello", false, false) == ids_t({15043}));
    CHECK(spm->tokenize("", true, false) == ids_t({1}));
    CHECK(spm->tokenize("", false, false).empty());
    const auto l3 = tok_test::load_vocab("llama-bpe");
    const auto ids = l3->tokenize("Hello", true, false);
    CHECK(ids.size() == 2 && ids[0] == 128000);
    const auto q = tok_test::load_vocab("qwen2");
    CHECK(!q->add_bos());
    CHECK_EQ(q->tokenize("Hello", true, false).size(), size_t(1));
}

TM_TEST("tokenizer: SPM space prefix after a special token") {
    const auto v = tok_test::load_vocab("llama-spm");
    // "<s>" parsed as BOS, then the raw text gets the leading space again ("▁Hello" = 15043).
    CHECK(v->tokenize("<s>Hello</s>", false, true) == ids_t({1, 15043, 2}));
    // Without parse_special "<s>" is text.
    const auto ids = v->tokenize("<s>Hello", false, false);
    for (int32_t id : ids) CHECK(!v->is_special(id));
}

TM_TEST("tokenizer: SPM byte fallback and invalid UTF-8") {
    const auto v = tok_test::load_vocab("llama-spm");
    // U+1D538 (mathematical double-struck A) is not in the vocab: four <0xNN> tokens (id 3 + byte).
    const auto ids = v->tokenize("\xF0\x9D\x94\xB8", false, false);
    CHECK(ids == ids_t({29871, 3 + 0xF0, 3 + 0x9D, 3 + 0x94, 3 + 0xB8}));
    CHECK_EQ(v->detokenize(ids.data(), ids.size(), {true, true}), "\xF0\x9D\x94\xB8");
    // A lone invalid byte goes through as its byte token; decoding shows U+FFFD.
    const auto bad = v->tokenize("a\xFF", false, false);
    CHECK(!bad.empty() && bad.back() == 3 + 0xFF);
    CHECK_EQ(v->detokenize(bad.data(), bad.size(), {true, true}), "a\xEF\xBF\xBD");
}

TM_TEST("tokenizer: BPE invalid UTF-8 becomes U+FFFD") {
    const auto v = tok_test::load_vocab("qwen2");
    const auto ids = v->tokenize("a\xFF" "b", false, false);
    CHECK_EQ(v->detokenize(ids.data(), ids.size(), {true, true}), "a\xEF\xBF\xBD" "b");
}

namespace {

// Byte-level symbols for a tiny BPE vocab: ASCII letters map to themselves, ' ' to "Ġ".
vocab_spec tiny_bpe() {
    vocab_spec s;
    s.model = "gpt2";
    s.pre = "gpt-2";
    s.tokens = {"a", "b", "c", "ab", "bc", "abc", "Ġ", "Ġa", "<|end|>"};
    s.types = {1, 1, 1, 1, 1, 1, 1, 1, 3};
    s.merges = {"a b", "ab c", "b c", "Ġ a"};
    s.eos = 8;
    return s;
}

} // namespace

TM_TEST("tokenizer: BPE merges by rank, leftmost first") {
    const auto v = vocab::from_spec(tiny_bpe());
    CHECK(v->tokenize("abc", false, false) == ids_t({5}));      // a+b (rank 0), then ab+c (rank 1)
    CHECK(v->tokenize("bc", false, false) == ids_t({4}));
    CHECK(v->tokenize("cab", false, false) == ids_t({2, 3}));
    CHECK(v->tokenize("abab", false, false) == ids_t({3, 3}));  // equal ranks: leftmost first
    CHECK(v->tokenize(" a", false, false) == ids_t({7}));
    CHECK(v->tokenize("a<|end|>", false, true) == ids_t({0, 8}));
    CHECK(v->eog_ids() == ids_t({8}));
    CHECK(v->is_eog(8));
    CHECK(!v->is_eog(0));
}

TM_TEST("tokenizer: SPM merges by score") {
    vocab_spec s;
    s.model = "llama";
    s.tokens = {"<unk>", "<s>", "</s>", "▁", "a", "b", "▁a", "ab", "▁ab"};
    s.scores = {0, 0, 0, -1, -1, -1, -3, -2, -1};
    s.types = {2, 3, 3, 1, 1, 1, 1, 1, 1};
    const auto v = vocab::from_spec(s);
    // "▁ab": a+b (score -2) beats ▁+a (-3); then "▁"+"ab" → "▁ab".
    CHECK(v->tokenize("ab", false, false) == ids_t({8}));
    // No byte tokens and no single-char token for "c": falls back to <unk>.
    CHECK(v->tokenize("c", false, false) == ids_t({3, 0}));
}

TM_TEST("tokenizer: metadata errors") {
    vocab_spec bad = tiny_bpe();
    bad.model = "bert";
    CHECK_THROWS_CODE(vocab::from_spec(bad), tokenizer);
    bad = tiny_bpe();
    bad.pre = "no-such-pre";
    CHECK_THROWS_CODE(vocab::from_spec(bad), tokenizer);
    // An out-of-range special id is ignored, as llama.cpp does (files store u32 -1 for "none"): the
    // type's default applies, here none since the gpt2 default (11) is out of range too.
    bad = tiny_bpe();
    bad.eos = 4294967295ll;
    CHECK_EQ(vocab::from_spec(bad)->eos(), -1);
    bad = tiny_bpe();
    bad.merges.push_back("a zz");
    CHECK_THROWS_CODE(vocab::from_spec(bad), tokenizer);
    bad = tiny_bpe();
    bad.merges.push_back("abc");
    CHECK_THROWS_CODE(vocab::from_spec(bad), tokenizer);
    bad = tiny_bpe();
    bad.scores = {1.0f};
    CHECK_THROWS_CODE(vocab::from_spec(bad), tokenizer);
    bad = tiny_bpe();
    bad.types[0] = 9;
    CHECK_THROWS_CODE(vocab::from_spec(bad), tokenizer);
    bad = tiny_bpe();
    bad.tokens.clear();
    bad.types.clear();
    CHECK_THROWS_CODE(vocab::from_spec(bad), tokenizer);
    bad = tiny_bpe();
    bad.add_bos = 1;  // no BOS id and the gpt2 default (11) is out of range
    CHECK_THROWS_CODE(vocab::from_spec(bad), tokenizer);
    // A missing pre-tokenizer name falls back to llama.cpp's default.
    bad = tiny_bpe();
    bad.pre.clear();
    CHECK(vocab::from_spec(bad)->pre() == tmill::tok::pre_type::default_);
    const auto v = vocab::from_spec(tiny_bpe());
    CHECK_THROWS_CODE(v->token_to_piece(9), invalid_argument);
    CHECK_THROWS_CODE(v->token_to_piece(-1), invalid_argument);
    const int32_t ids[] = {0, 42};
    CHECK_THROWS_CODE(v->detokenize(ids, 2, {true, true}), invalid_argument);
}

TM_TEST("tokenizer: 1 MB of English with the qwen2 vocab is fast") {
    const auto v = tok_test::load_vocab("qwen2");
    std::string text;
    const char * para = "The quick brown fox jumps over the lazy dog. It's 2024, and we've got 3.14159 reasons "
                        "to tokenize quickly!\n  Indented\tand tabbed; caf\xC3\xA9 na\xC3\xAFve \xE2\x80\x94 done. ";
    while (text.size() < (size_t(1) << 20)) text += para;
    const auto t0 = std::chrono::steady_clock::now();
    const auto ids = v->tokenize(text, false, false);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    CHECK(s < 5.0);  // ~0.1 s optimised; the bound only catches quadratic behaviour on a busy machine
    CHECK(ids.size() > 100000);
    CHECK_EQ(v->detokenize(ids.data(), ids.size(), {true, true}), text);
}
