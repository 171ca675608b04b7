// GBNF parser: every construct parses to the expected shape, every error names its line and column.
#include "check.h"

#include "grammar/grammar.h"

#include <string>

using namespace tmill::grammar;

namespace {

// Runs parse_grammar and returns "line:column message" of the error, or "" when it parsed.
std::string error_of(const std::string & text) {
    try {
        parse_grammar(text);
    } catch (const grammar_error & e) {
        CHECK(e.code() == tmill::error_code::grammar_invalid);
        return std::to_string(e.line()) + ":" + std::to_string(e.column()) + " " + e.what();
    }
    return "";
}

bool starts_with(const std::string & s, const std::string & p) { return s.compare(0, p.size(), p) == 0; }

int32_t rule_index(const grammar & g, const std::string & name) {
    for (size_t i = 0; i < g.rules.size(); ++i) if (g.rules[i].name == name) return int32_t(i);
    return -1;
}

} // namespace

TM_TEST("grammar: parse rules, literals, alternatives") {
    const grammar g = parse_grammar("root ::= \"ab\" | other\nother ::= \"c\"");
    CHECK_EQ(g.rules.size(), size_t(2));
    CHECK_EQ(g.root, rule_index(g, "root"));
    const rule & root = g.rules[size_t(g.root)];
    CHECK_EQ(root.alts.size(), size_t(2));
    // alternative 1: 'a' 'b' end
    CHECK(g.elements[size_t(root.alts[0])].kind == element_kind::chars);
    CHECK(g.sets[size_t(g.elements[size_t(root.alts[0])].value)].matches('a'));
    CHECK(g.elements[size_t(root.alts[0]) + 1].kind == element_kind::chars);
    CHECK(g.elements[size_t(root.alts[0]) + 2].kind == element_kind::end);
    // alternative 2: a reference to "other"
    CHECK(g.elements[size_t(root.alts[1])].kind == element_kind::rule_ref);
    CHECK_EQ(g.elements[size_t(root.alts[1])].value, rule_index(g, "other"));
    CHECK_EQ(root.line, 1);
    CHECK_EQ(g.rules[size_t(rule_index(g, "other"))].line, 2);
}

TM_TEST("grammar: parse character classes, escapes and any") {
    const grammar g = parse_grammar("root ::= [a-c_0-9] [^\"\\\\] [\\n\\t\\]\\-] \"\\x41\\u00e9\\U0001F600\" .");
    const rule & root = g.rules[size_t(g.root)];
    const auto set_at = [&](int k) -> const char_set & { return g.sets[size_t(g.elements[size_t(root.alts[0] + k)].value)]; };
    CHECK(set_at(0).matches('a') && set_at(0).matches('c') && set_at(0).matches('_') && set_at(0).matches('5'));
    CHECK(!set_at(0).matches('d') && !set_at(0).matches('-'));
    CHECK(!set_at(1).matches('"') && !set_at(1).matches('\\'));
    CHECK(set_at(1).matches('a') && set_at(1).matches(0x10FFFF) && set_at(1).matches(0xE9));
    CHECK(set_at(2).matches('\n') && set_at(2).matches('\t') && set_at(2).matches(']') && set_at(2).matches('-'));
    CHECK(!set_at(2).matches('a'));
    CHECK(set_at(3).matches('A') && !set_at(3).matches('B'));
    CHECK(set_at(4).matches(0xE9));
    CHECK(set_at(5).matches(0x1F600));
    CHECK(set_at(6).matches(0) && set_at(6).matches('\n') && set_at(6).matches(0x10FFFF));
    // Literal UTF-8 in the grammar text.
    const grammar u = parse_grammar("root ::= \"é\" [α-ω]");
    const rule & ur = u.rules[size_t(u.root)];
    CHECK(u.sets[size_t(u.elements[size_t(ur.alts[0])].value)].matches(0xE9));
    CHECK(u.sets[size_t(u.elements[size_t(ur.alts[0] + 1)].value)].matches(0x3B2));
    CHECK(!u.sets[size_t(u.elements[size_t(ur.alts[0] + 1)].value)].matches('a'));
}

TM_TEST("grammar: parse groups, repetitions, comments and multi-line rules") {
    const std::string text =
        "# a comment line\n"
        "root ::= item+ (\",\" item)* \"!\"? # trailing comment\n"
        "item ::=\n"
        "    [a-z]{2,4}\n"
        "  | [0-9]{3} | \"x\"{1,}\n"
        "  | \"y\"{0,2}";
    const grammar g = parse_grammar(text);
    CHECK(rule_index(g, "item") >= 0);
    CHECK_EQ(g.rules[size_t(rule_index(g, "item"))].alts.size(), size_t(4));
    CHECK(g.rules.size() > 2);  // synthetic rules for the group and repetitions
    // A continuation line starting with a rule reference is still part of the rule.
    const grammar h = parse_grammar("root ::= a\n  b\na ::= \"a\"\nb ::= \"b\"");
    const rule & root = h.rules[size_t(h.root)];
    CHECK_EQ(root.alts.size(), size_t(1));
    CHECK(h.elements[size_t(root.alts[0]) + 1].kind == element_kind::rule_ref);
    CHECK(h.elements[size_t(root.alts[0]) + 2].kind == element_kind::end);
    // Names may hold digits, '_' and '-'; the empty literal and empty rules are the empty string.
    CHECK_EQ(error_of("root ::= x-1_b \"\"\nx-1_b ::= "), std::string());
}

TM_TEST("grammar: parse errors carry line and column") {
    CHECK(starts_with(error_of("root ::= foo"), "1:10 grammar: undefined rule 'foo'"));
    CHECK(starts_with(error_of("item ::= \"a\""), "1:1 grammar: missing rule 'root'"));
    CHECK(starts_with(error_of("root ::= \"a\"\nroot ::= \"b\""), "2:1 grammar: rule 'root' is defined twice"));
    CHECK(starts_with(error_of("root = \"a\""), "1:6 grammar: expected '::='"));
    CHECK(starts_with(error_of("root ::= \"abc"), "1:10 grammar: unterminated string literal"));
    CHECK(starts_with(error_of("root ::= [abc"), "1:10 grammar: unterminated character class"));
    CHECK(starts_with(error_of("root ::= []"), "1:10 grammar: empty character class"));
    CHECK(starts_with(error_of("root ::= [z-a]"), "1:11 grammar: character range is reversed"));
    CHECK(starts_with(error_of("root ::= (\"a\" | \"b\""), "1:20 grammar: missing ')'"));
    CHECK(starts_with(error_of("root ::= \"a\" )"), "1:14 grammar: unexpected ')'"));
    CHECK(starts_with(error_of("root ::= \"a\" @"), "1:14 grammar: unexpected character '@'"));
    CHECK(starts_with(error_of("root ::= \"\\q\""), "1:11 grammar: unknown escape"));
    CHECK(starts_with(error_of("root ::= \"\\x4\""), "1:11 grammar: expected 2 hex digits"));
    CHECK(starts_with(error_of("root ::= \"\\U00110000\""), "1:11 grammar: code point above U+10FFFF"));
    CHECK(starts_with(error_of("root ::= \"a\"{3,2}"), "1:13 grammar: repetition maximum is below its minimum"));
    CHECK(starts_with(error_of("root ::= \"a\"{2"), "1:15 grammar: expected '}'"));
    CHECK(starts_with(error_of("root ::= \"a\"{}"), "1:14 grammar: expected a repetition count"));
    CHECK(starts_with(error_of("root ::= \"a\"{5000}"), "1:14 grammar: repetition count above 1000"));
    CHECK(starts_with(error_of("\n\nroot ::= x\nx ::= x \"a\" | \"b\""), "4:1 grammar: left recursion: rule 'x'"));
    CHECK(starts_with(error_of("root ::= e x\nx ::= e root\ne ::= \"\" | \"z\"?"), "1:1 grammar: left recursion: rule 'root'"));
    CHECK(starts_with(error_of("root ::= x\nx ::= (x \"a\")? \"b\""), "2:1 grammar: left recursion: rule 'x'"));
    CHECK_EQ(error_of("root ::= (\"b\"?)* (\"\" | \"a\"){2,}"), std::string());  // repeating the empty string is fine
    CHECK(starts_with(error_of("root ::= \"a\"\n  \"b\" \xff"), "2:7 grammar: unexpected character"));
    CHECK(starts_with(error_of("root ::= \"\xc3\""), "1:11 grammar: invalid UTF-8"));
    CHECK(starts_with(error_of("::= \"a\""), "1:1 grammar: expected a rule name"));
}
