// Fuzz target: the GBNF parser on arbitrary text. A grammar_error (or tmill::error) is the expected outcome
// for invalid text; a parsed grammar is checked for internal consistency (every element index it hands the
// matcher is in range), since the matcher trusts those indices.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "base/error.h"
#include "grammar/grammar.h"

using namespace tmill::grammar;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t * data, size_t size) {
    const std::string_view text(reinterpret_cast<const char *>(data), size);
    grammar g;
    try {
        g = parse_grammar(text);
    } catch (const tmill::error &) {
        return 0;
    }
    if (g.root < 0 || size_t(g.root) >= g.rules.size()) std::abort();
    for (const auto & r : g.rules) {
        for (int32_t a : r.alts) {
            if (a < 0 || size_t(a) >= g.elements.size()) std::abort();
        }
    }
    for (const auto & e : g.elements) {
        if (e.kind == element_kind::chars && (e.value < 0 || size_t(e.value) >= g.sets.size())) std::abort();
        if (e.kind == element_kind::rule_ref && (e.value < 0 || size_t(e.value) >= g.rules.size())) std::abort();
    }
    return 0;
}
