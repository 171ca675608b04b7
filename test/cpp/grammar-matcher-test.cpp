// Grammar matcher over raw text (no vocabulary): accepting and rejecting strings, incremental UTF-8,
// repetition bounds, nested and recursive rules, completion.
#include "check.h"

#include "grammar/matcher.h"

#include <string>

using namespace tmill::grammar;

namespace {

std::shared_ptr<const compiled_grammar> compile(const std::string & text) { return compile_grammar(text, nullptr); }

// The whole string is in the language.
bool full(const std::string & grammar_text, const std::string & input) {
    matcher m(compile(grammar_text));
    return m.accept_bytes(input) && m.can_end();
}

// The string is a prefix of something in the language.
bool prefix(const std::string & grammar_text, const std::string & input) {
    matcher m(compile(grammar_text));
    return m.accept_bytes(input);
}

} // namespace

TM_TEST("grammar: matcher accepts and rejects literals and alternatives") {
    const std::string g = "root ::= \"yes\" | \"no\"";
    CHECK(full(g, "yes"));
    CHECK(full(g, "no"));
    CHECK(!full(g, "ye"));
    CHECK(prefix(g, "ye"));
    CHECK(!prefix(g, "yes!"));
    CHECK(!prefix(g, "n0"));
    CHECK(!full(g, ""));
    matcher m(compile(g));
    CHECK(!m.can_end());
    CHECK(!m.is_complete());
    CHECK(m.accept_bytes("n"));
    CHECK(!m.accept_bytes("x"));   // rejected: state unchanged
    CHECK(m.accept_bytes("o"));
    CHECK(m.can_end());
    CHECK(m.is_complete());
    CHECK(!m.accept_bytes("o"));
}

TM_TEST("grammar: matcher repetition bounds") {
    const std::string g = "root ::= \"a\"{2,4} \"b\"{3} \"c\"{1,}";
    CHECK(!full(g, "abbbc"));
    CHECK(full(g, "aabbbc"));
    CHECK(full(g, "aaaabbbccccc"));
    // Repeating something that can match nothing is the same as repeating its non-empty part.
    const std::string nullable = "root ::= (\"a\"?)* (\"b\" | \"\")+ \"c\"";
    CHECK(full(nullable, "c"));
    CHECK(full(nullable, "aaabbc"));
    CHECK(!prefix(nullable, "ba"));
    CHECK(!prefix(g, "aaaaa"));
    CHECK(!full(g, "aabbc"));
    CHECK(!prefix(g, "aabbbb"));
    CHECK(!full(g, "aabbb"));
    const std::string star = "root ::= \"x\"* \"y\"+ \"z\"?";
    CHECK(full(star, "y"));
    CHECK(full(star, "xxxyyyz"));
    CHECK(!full(star, "xxx"));
    CHECK(!prefix(star, "yzz"));
    CHECK(!prefix(star, "yx"));
    const std::string group = "root ::= (\"ab\" | \"c\"){2} \"!\"";
    CHECK(full(group, "abc!"));
    CHECK(full(group, "cc!"));
    CHECK(!prefix(group, "ccc"));
    CHECK(!prefix(group, "aab"));
}

TM_TEST("grammar: matcher nested and recursive rules") {
    const std::string g =
        "root ::= value\n"
        "value ::= list | num\n"
        "list ::= \"[\" (value (\",\" value)*)? \"]\"\n"
        "num ::= [0-9]+\n";
    CHECK(full(g, "[]"));
    CHECK(full(g, "[1,[2,[[]]],34]"));
    CHECK(full(g, "7"));
    CHECK(!full(g, "[1,]"));
    CHECK(!prefix(g, "[1,]"));
    CHECK(!full(g, "[[1]"));
    CHECK(prefix(g, "[[[[[[[[[[[[[[[[[[[[1"));
    // Deep right recursion must not make the stack set grow.
    matcher m(compile("root ::= \"a\" root | \"b\""));
    for (int k = 0; k < 5000; ++k) CHECK(m.accept_bytes("a"));
    CHECK(m.n_stacks() <= 2);
    CHECK(m.accept_bytes("b"));
    CHECK(m.is_complete());
}

TM_TEST("grammar: matcher classes, negation, any and newlines") {
    const std::string str = "root ::= \"\\\"\" ([^\"\\\\] | \"\\\\\" [\"\\\\n])* \"\\\"\"";
    CHECK(full(str, "\"hello world\""));
    CHECK(full(str, "\"a\\\"b\\\\c\\n\""));
    CHECK(!prefix(str, "\"a\\x"));
    CHECK(!prefix(str, "\"ab\"c"));
    const std::string any = "root ::= . . \"\\n\"";
    CHECK(full(any, "\n\x01\n"));
    CHECK(full(any, "é€\n"));
    CHECK(!full(any, "abc"));
}

TM_TEST("grammar: matcher decodes UTF-8 incrementally") {
    const std::string g = "root ::= \"é\" [α-ω]+ \"😀\"";  // U+00E9, U+03B1..U+03C9, U+1F600
    matcher m(compile(g));
    const std::string text = "éβγ😀";
    // One byte at a time: every prefix, including those ending inside a code point, is accepted.
    for (char c : text) CHECK(m.accept_bytes(std::string(1, c)));
    CHECK(m.can_end());
    matcher p(compile(g));
    CHECK(p.accept_bytes("\xc3"));       // first byte of é: viable
    CHECK(!p.can_end());
    CHECK(!p.accept_bytes("\xaa"));      // U+00EA: not in the grammar
    CHECK(p.accept_bytes("\xa9"));       // completes é
    CHECK(!p.accept_bytes("\xc3"));      // no code point starting C3 (U+00C0..U+00FF) is in α-ω
    CHECK(p.accept_bytes("\xce"));       // U+0380..U+03BF: overlaps α-ω
    CHECK(p.accept_bytes("\xb1"));       // α
    CHECK(!p.accept_bytes("\xf0\x9f\x98\x81"));  // 😁 is not 😀
    CHECK(!p.accept_bytes("\x80"));      // a stray continuation byte
    CHECK(!p.accept_bytes("\xed\xa0\x80"));  // a surrogate is not well-formed UTF-8
    CHECK(p.accept_bytes("\xf0\x9f"));
    CHECK(p.accept_bytes("\x98\x80"));
    CHECK(p.is_complete());
}

TM_TEST("grammar: matcher caps ambiguous stack growth") {
    // Each 'a' can close any of the open groups: the number of stacks grows with the text.
    const std::string g = "root ::= x\nx ::= \"a\" x \"b\"? | \"a\"";
    matcher m(compile(g));
    bool ok = true;
    int k = 0;
    for (; k < 5000 && ok; ++k) ok = m.accept_bytes("a");
    // One stack per possible number of pending "b"s: the set passes k_max_stacks and the matcher stops
    // with a clear state instead of growing without bound.
    CHECK(!ok);
    CHECK(m.overflowed());
    CHECK(k > k_max_stacks - 10 && k < k_max_stacks + 10);
    CHECK(!m.accept_bytes("b"));
    uint8_t mask[1] = {1};
    CHECK_EQ(m.fill_mask(mask), 0);
    // Exponentially ambiguous: every character can belong to either of two rules.
    matcher e(compile("root ::= (a | b)*\na ::= [a-z] c\nb ::= [a-z]\nc ::= \"\" | [a-z] c"));
    bool all = true;
    for (int i = 0; i < 200 && all; ++i) all = e.accept_bytes("q");
    CHECK(all || e.overflowed());
}

TM_TEST("grammar: random texts either compile or fail with a grammar_error; matching them never crashes") {
    // Fragments of the dialect, glued at random: many are invalid, some are odd but valid.
    const char * parts[] = {"root", " ::= ", "x", "::=", "\"a\"", "\"\\n\"", "[a-c]", "[^x]", ".", "(", ")", "|", "*", "+", "?",
                            "{2}", "{1,3}", "{0,}", " ", "\n", "# c\n", "y ::= ", "\"\"", "[", "]", "\\", "\"", "{", "}", "-", "é"};
    const int n_parts = int(sizeof(parts) / sizeof(parts[0]));
    uint64_t s = 12345;
    auto next = [&s]() { s = s * 6364136223846793005ull + 1442695040888963407ull; return uint32_t(s >> 33); };
    int compiled = 0, rejected = 0;
    for (int iter = 0; iter < 3000; ++iter) {
        std::string text = iter % 2 ? "root ::= " : "";
        const int len = 1 + int(next() % 12);
        for (int k = 0; k < len; ++k) text += parts[next() % n_parts];
        std::shared_ptr<const compiled_grammar> g;
        try {
            g = compile(text);
        } catch (const grammar_error & e) {
            CHECK(e.line() >= 1 && e.column() >= 1);
            ++rejected;
            continue;
        }
        ++compiled;
        matcher m(g);
        for (int k = 0; k < 20; ++k) {
            const char c = "abcxy\n\"é"[next() % 8];
            m.accept_bytes(std::string(1, c));
        }
        (void)m.can_end();
    }
    CHECK(compiled > 50);
    CHECK(rejected > 50);
    // Deep nesting is refused, not a stack overflow.
    std::string deep = "root ::= " + std::string(5000, '(') + "\"a\"" + std::string(5000, ')');
    bool refused = false;
    try { compile(deep); } catch (const grammar_error & e) { refused = std::string(e.what()).find("nest too deeply") != std::string::npos; }
    CHECK(refused);
    // A long chain of rules that each start with the next overflows cleanly.
    std::string chain = "root ::= r0\n";
    for (int k = 0; k < 6000; ++k) chain += "r" + std::to_string(k) + " ::= r" + std::to_string(k + 1) + " \"z\"\n";
    chain += "r6000 ::= \"a\"\n";
    matcher c(compile(chain));
    CHECK(c.overflowed());
    CHECK(!c.accept_bytes("a"));
}
