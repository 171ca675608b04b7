// grammar: a parsed and validated GBNF grammar in the flat form the matcher walks (llama.cpp's dialect;
// see native/grammar/README.md for the accepted syntax). Immutable once built and shared between
// threads and requests.
//
// Layout: every rule is a list of alternatives; an alternative is a run of elements in `elements`
// ending with an `end` element. Groups and repetitions are desugared into synthetic rules at parse
// time, so the matcher only ever sees three element kinds.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/error.h"

namespace tmill::grammar {

// A grammar_invalid error that also carries where in the text it was found (1-based; column counts
// bytes of the line).
class grammar_error : public tmill::error {
public:
    grammar_error(const std::string & message, int32_t line, int32_t column)
        : tmill::error(error_code::grammar_invalid,
                       message + " at line " + std::to_string(line) + ", column " + std::to_string(column)),
          line_(line), column_(column) {}
    int32_t line() const { return line_; }
    int32_t column() const { return column_; }

private:
    int32_t line_, column_;
};

enum class element_kind : uint8_t {
    end,       // the alternative is complete
    chars,     // one code point from char_sets[value]
    rule_ref,  // rules[value]
};

struct element {
    element_kind kind = element_kind::end;
    int32_t value = 0;
};

// A set of code points: a bitmap for ASCII (the common case, one test) plus the sorted, disjoint,
// non-adjacent inclusive ranges of the whole set (negated classes are complemented at parse time).
struct char_set {
    std::array<uint64_t, 2> ascii{};                      // bit c set ⇔ code point c < 128 is in the set
    std::vector<std::pair<uint32_t, uint32_t>> ranges;    // (n_ranges) [lo, hi] over 0..0x10FFFF

    bool matches(uint32_t cp) const {
        if (cp < 128) return (ascii[cp >> 6] >> (cp & 63)) & 1;
        for (const auto & r : ranges) {
            if (cp < r.first) return false;
            if (cp <= r.second) return true;
        }
        return false;
    }
    // True when some code point in [lo, hi] is in the set.
    bool intersects(uint32_t lo, uint32_t hi) const {
        for (const auto & r : ranges) {
            if (r.first > hi) return false;
            if (r.second >= lo) return true;
        }
        return false;
    }
};

struct rule {
    std::string name;              // synthetic rules are named "<parent>_<n>"
    std::vector<int32_t> alts;     // (n_alternatives) index in `elements` of each alternative's first element
    int32_t line = 0, column = 0;  // where it was defined (synthetic: where its group/repetition starts)
};

struct grammar {
    std::vector<element> elements;   // every alternative of every rule, each closed by an `end`
    std::vector<char_set> sets;      // referenced by chars elements
    std::vector<rule> rules;
    int32_t root = -1;               // index of rule "root"
};

// Parses and validates GBNF text. Throws grammar_error (code grammar_invalid) with the line and column
// of: bad syntax, an undefined rule, a rule defined twice, a missing root, bad repetition bounds, or
// left recursion (direct or through rules that can match nothing), which the matcher cannot run.
grammar parse_grammar(std::string_view text);

// Upper bound on repetition counts ({m,n}); larger grammars are better written with * or +.
constexpr int32_t k_max_repetition = 1000;

} // namespace tmill::grammar
