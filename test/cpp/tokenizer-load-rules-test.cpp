// llama.cpp parity rules applied at load time and in the pre-tokenizers: unassigned code points
// (Unicode 15.1) join "[^\s\p{L}\p{N}]+" runs, and end-of-generation / FIM tokens found by their text
// become CONTROL and (for EOG, FIM pad/repo/sep) join the end-of-generation set.
#include "check.h"

#include <algorithm>
#include <string>
#include <vector>

#include "tokenizer-test-util.h"
#include "tokenizer/pre-tokenizer.h"
#include "tokenizer/unicode.h"

using tmill::tok::cpt_class;
using tmill::tok::pre_type;
using tmill::tok::token_type;
using tmill::tok::vocab;
using tmill::tok::vocab_spec;
using ids_t = std::vector<int32_t>;
using lens_t = std::vector<size_t>;

namespace {

lens_t split(pre_type type, const std::vector<uint32_t> & cpts) {
    lens_t lens;
    tmill::tok::pre_tokenize(type, cpts, lens);
    return lens;
}

bool ends_with(const ids_t & ids, const ids_t & tail) {
    return ids.size() >= tail.size() && std::equal(tail.begin(), tail.end(), ids.end() - tail.size());
}

} // namespace

TM_TEST("tokenizer: unassigned code points are classified as in Unicode 15.1") {
    CHECK(tmill::tok::classify(0xE03CE) == cpt_class::undefined);   // plane 14, never assigned
    CHECK(tmill::tok::classify(0x10D4A) == cpt_class::undefined);   // Garay letter, new in Unicode 16.0
    CHECK(tmill::tok::classify(0x1CC00) == cpt_class::undefined);   // legacy computing symbol, 16.0
    CHECK(tmill::tok::classify(0x2EBF0) == cpt_class::letter);      // CJK extension I, 15.1
    CHECK(tmill::tok::classify(0x0041) == cpt_class::letter);
}

TM_TEST("tokenizer: unassigned code points join the punctuation run in every splitter") {
    // U+E03CE '/' 'C' 'a': one "[^\s\p{L}\p{N}]+" piece, then the letters.
    const std::vector<uint32_t> text = {0xE03CE, '/', 'C', 'a'};
    for (pre_type t : {pre_type::llama3, pre_type::qwen2, pre_type::qwen35, pre_type::gpt2, pre_type::starcoder}) {
        CHECK(split(t, text) == lens_t({2, 2}));
    }
    // " " U+10D4A "x": the space joins the run, which stops at the letter.
    CHECK(split(pre_type::gpt2, {' ', 0x10D4A, 'x'}) == lens_t({2, 1}));
    CHECK(split(pre_type::llama3, {' ', 0x10D4A, 'x'}) == lens_t({2, 1}));
    // Before a letter, an unassigned code point is the optional prefix of the llama3 letter run.
    CHECK(split(pre_type::llama3, {0xE03CE, 'a', 'b'}) == lens_t({3}));
}

TM_TEST("tokenizer: llama-bpe tokenizes an unassigned code point like llama.cpp") {
    const auto v = tok_test::load_vocab("llama-bpe");
    const std::string text = "\xD8\xA8\xD8\xA8 \xF1\x8D\xA8\x8C" "Ca\xCC\xB8\xE1\x88\xAD\xD7\x9C\xD8\xA8 don't\xC4\x82\xC3\xB8"
                             "\xF3\xA0\x8F\x8E/CamelCase940'";
    const auto ids = v->tokenize(text, false, false);
    CHECK(ends_with(ids, {175, 254, 237, 236, 14, 26479, 301, 4301, 21251, 6}));
}

TM_TEST("tokenizer: '</s>' stored as NORMAL becomes CONTROL and end-of-generation (qwen2, qwen35)") {
    for (const char * name : {"qwen2", "qwen35"}) {
        const auto v = tok_test::load_vocab(name);
        const int32_t s = v->text_to_token("</s>");
        CHECK_EQ(s, 128247);
        CHECK(v->get_type(s) == token_type::control);
        CHECK(v->is_eog(s));
        CHECK(v->is_eog(151643) && v->is_eog(151645));  // <|endoftext|>, <|im_end|>
        const std::string text = "\t</s>\xC3\xBC" "b\xCC\x88<|endoftext|>";
        CHECK(v->tokenize(text, false, true) == ids_t({197, 128247, 130977, 136, 230, 151643}));
        const auto plain = v->tokenize(text, false, false);
        CHECK(std::find(plain.begin(), plain.end(), 128247) == plain.end());
        const ids_t with_s = {197, 128247, 130977};
        CHECK_EQ(v->detokenize(with_s.data(), with_s.size(), {true, true}), "\t\xC3\xBC" "b");
        CHECK_EQ(v->detokenize(with_s.data(), with_s.size(), {false, true}), "\t</s>\xC3\xBC" "b");
    }
}

TM_TEST("tokenizer: FIM tokens found by text become CONTROL; pad/repo/sep end generation") {
    const auto dc = tok_test::load_vocab("deepseek-coder");
    CHECK_EQ(dc->fim_pre(), 32016);
    CHECK_EQ(dc->fim_suf(), 32015);
    CHECK_EQ(dc->fim_mid(), 32017);
    CHECK_EQ(dc->fim_pad(), -1);
    for (int32_t id : {32015, 32016, 32017}) {
        CHECK(dc->get_type(id) == token_type::control);
        CHECK(!dc->is_eog(id));
    }
    CHECK(dc->eog_ids() == ids_t({32014}));
    // Not parsed as special without parse_special any more.
    const auto plain = dc->tokenize("<\xEF\xBD\x9C" "fim\xE2\x96\x81" "begin\xEF\xBD\x9C>x", false, false);
    CHECK(std::find(plain.begin(), plain.end(), 32016) == plain.end());
    const auto sc = tok_test::load_vocab("starcoder");
    CHECK_EQ(sc->fim_pad(), 4);
    CHECK(sc->eog_ids() == ids_t({0, 4}));
    // phi-3's USER_DEFINED "</s>" ends generation too.
    const auto phi = tok_test::load_vocab("phi-3");
    CHECK(phi->is_eog(2) && phi->get_type(2) == token_type::control);
}

TM_TEST("tokenizer: FIM ids from metadata are kept and pad/repo/sep end generation") {
    vocab_spec spec;
    spec.tokens = {"a", "b", "<fim_pad>", "<|file_sep|>", "c"};
    spec.eos = 1;
    spec.fim_pad = 4;  // named by the metadata: "<fim_pad>" is not looked for
    const auto v = vocab::from_spec(spec);
    CHECK_EQ(v->fim_pad(), 4);
    CHECK(v->get_type(2) == token_type::normal);
    CHECK(v->get_type(4) == token_type::normal);  // a metadata id keeps its type
    CHECK_EQ(v->fim_sep(), 3);
    CHECK(v->get_type(3) == token_type::control);
    CHECK(v->eog_ids() == ids_t({1, 3, 4}));
}

TM_TEST("tokenizer: harmony and gemma4 exceptions to the end-of-generation texts") {
    vocab_spec harmony;
    harmony.tokens = {"x", "<|end|>", "<|return|>", "<|call|>", "<|channel|>"};
    harmony.types = {1, 3, 3, 3, 3};
    harmony.eos = 2;
    const auto h = vocab::from_spec(harmony);
    CHECK(h->eog_ids() == ids_t({2, 3}));
    CHECK(h->get_type(1) == token_type::user_defined);
    CHECK(h->get_type(4) == token_type::user_defined);
    vocab_spec gemma;
    gemma.tokens = {"x", "</s>", "<|tool_response>", "<eos>"};
    gemma.eos = 3;
    const auto g = vocab::from_spec(gemma);
    CHECK(g->eog_ids() == ids_t({2, 3}));
    CHECK(g->get_type(1) == token_type::normal);
    CHECK(g->get_type(2) == token_type::control);
    // Without "<|tool_response>", "</s>" is end-of-generation and CONTROL.
    vocab_spec plain;
    plain.tokens = {"x", "</s>", "y"};
    plain.eos = 0;
    const auto p = vocab::from_spec(plain);
    CHECK(p->eog_ids() == ids_t({0, 1}));
    CHECK(p->get_type(1) == token_type::control);
}
