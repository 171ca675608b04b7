// Pre-tokenizer splits and the generated Unicode tables, on small hand-checked inputs.
#include "check.h"

#include <string>
#include <vector>

#include "tokenizer/pre-tokenizer.h"
#include "tokenizer/unicode.h"

using namespace tmill::tok;

namespace {

// The words of `text` under `type`, joined with '|'.
std::string split(pre_type type, const std::string & text) {
    std::vector<uint32_t> cpts;
    decode_utf8(text, cpts);
    std::vector<size_t> lens;
    pre_tokenize(type, cpts, lens);
    std::string out;
    size_t start = 0, total = 0;
    for (size_t len : lens) {
        if (!out.empty()) out += '|';
        for (size_t i = start; i < start + len; ++i) append_utf8(cpts[i], out);
        start += len;
        total += len;
    }
    if (total != cpts.size()) out += "<lengths do not cover the text>";
    return out;
}

} // namespace

TM_TEST("tokenizer: unicode classes") {
    CHECK(classify('A') == cpt_class::letter);
    CHECK(classify(0x00E9) == cpt_class::letter);    // é
    CHECK(classify(0x4E00) == cpt_class::letter);    // 一
    CHECK(classify('7') == cpt_class::number);
    CHECK(classify(0x00BD) == cpt_class::number);    // ½
    CHECK(classify('!') == cpt_class::punctuation);
    CHECK(classify('$') == cpt_class::symbol);
    CHECK(classify(0x1F999) == cpt_class::symbol);   // 🦙
    CHECK(classify(0x0301) == cpt_class::mark);      // combining acute
    CHECK(classify(' ') == cpt_class::separator);
    CHECK(classify('\n') == cpt_class::control);
    CHECK(classify(0x0378) == cpt_class::undefined);  // unassigned
    CHECK(classify(0x110000) == cpt_class::undefined);
    CHECK(is_whitespace(' ') && is_whitespace('\t') && is_whitespace(0x0085) && is_whitespace(0x3000));
    CHECK(!is_whitespace(0x200B) && !is_whitespace(0xFEFF) && !is_whitespace(0x1C));
}

TM_TEST("tokenizer: utf-8 decode and byte-level map") {
    std::vector<uint32_t> c;
    decode_utf8("a\xC3\xA9\xFF\xE2\x82", c);  // a, é, invalid byte, truncated sequence
    CHECK(c == std::vector<uint32_t>({'a', 0xE9, 0xFFFD, 0xFFFD, 0xFFFD}));
    CHECK_EQ(byte_to_cpt(' '), 0x120u);  // 'Ġ'
    CHECK_EQ(byte_to_cpt('a'), uint32_t('a'));
    CHECK_EQ(byte_to_cpt('\n'), 0x10Au);  // 'Ċ'
    for (int b = 0; b < 256; ++b) CHECK_EQ(cpt_to_byte(byte_to_cpt(uint8_t(b))), b);
    CHECK_EQ(cpt_to_byte(0x4E00), -1);
}

TM_TEST("tokenizer: pre-tokenizer names") {
    pre_type t;
    CHECK(pre_type_from_name("llama-bpe", t) && t == pre_type::llama3);
    CHECK(pre_type_from_name("qwen35", t) && t == pre_type::qwen35);
    CHECK(pre_type_from_name("refact", t) && t == pre_type::starcoder);
    CHECK(!pre_type_from_name("no-such", t));
}

TM_TEST("tokenizer: llama3 split") {
    CHECK_EQ(split(pre_type::llama3, "Hello world"), "Hello| world");
    CHECK_EQ(split(pre_type::llama3, "1234567"), "123|456|7");
    CHECK_EQ(split(pre_type::llama3, "I'M here"), "I|'M| here");
    CHECK_EQ(split(pre_type::llama3, "a   b"), "a|  | b");          // \s+(?!\S) leaves one space
    CHECK_EQ(split(pre_type::llama3, "a \n\n b"), "a| \n\n| b");      // \s*[\r\n]+
    CHECK_EQ(split(pre_type::llama3, "x!!\n\ny"), "x|!!\n\n|y");     // punctuation takes newlines
    CHECK_EQ(split(pre_type::llama3, "\tword"), "\tword");            // any non-letter prefix
    CHECK_EQ(split(pre_type::llama3, "end  "), "end|  ");
}

TM_TEST("tokenizer: qwen2 and qwen35 split") {
    CHECK_EQ(split(pre_type::qwen2, "1234"), "1|2|3|4");
    // A combining mark: a word character for qwen35, punctuation for qwen2.
    CHECK_EQ(split(pre_type::qwen35, "e\xCC\x81t\xC3\xA9"), "e\xCC\x81t\xC3\xA9");
    CHECK_EQ(split(pre_type::qwen2, "e\xCC\x81t\xC3\xA9"), "e|\xCC\x81t\xC3\xA9");
}

TM_TEST("tokenizer: gpt-2 split") {
    CHECK_EQ(split(pre_type::gpt2, "Hello world's 123 !!"), "Hello| world|'s| 123| !!");
    CHECK_EQ(split(pre_type::gpt2, "I'M"), "I|'|M");                  // case-sensitive contractions
    CHECK_EQ(split(pre_type::gpt2, "a\tb"), "a|\t|b");                // lone whitespace on its own
    CHECK_EQ(split(pre_type::gpt2, "a   b"), "a|  | b");
}

TM_TEST("tokenizer: multi-pass splits") {
    CHECK_EQ(split(pre_type::starcoder, "x 123"), "x| |1|2|3");
    CHECK_EQ(split(pre_type::falcon, "a+=1234"), "a|+=|123|4");
    CHECK_EQ(split(pre_type::deepseek_coder, "ab\n12"), "ab|\n|1|2");
    CHECK_EQ(split(pre_type::deepseek_llm, "Hi 123 \xE4\xBD\xA0\xE5\xA5\xBD  "), "Hi| |123| |\xE4\xBD\xA0\xE5\xA5\xBD|  ");
    CHECK_EQ(split(pre_type::default_, "a+b 12345"), "a|+|b| |123|45");
}
