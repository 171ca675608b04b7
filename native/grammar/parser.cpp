// GBNF parser: text → grammar (flat elements, synthetic rules for groups and repetitions), then the
// checks the matcher relies on (every rule defined, a root, no left recursion).
#include "grammar/grammar.h"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace tmill::grammar {

namespace {

constexpr uint32_t k_max_code_point = 0x10FFFF;
constexpr size_t k_max_elements = size_t(1) << 22;  // desugared repetitions beyond this are refused
constexpr int32_t k_max_nesting = 256;               // parenthesised groups inside one another

bool is_name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

struct tmp_rule {
    std::string name;
    std::vector<std::vector<element>> alts;   // rule_ref values are rule ids
    bool defined = false;
    bool repetition = false;   // synthetic R ::= item R | ε made by *, + or {m,}
    size_t def_at = 0;         // byte offset of the definition (or the group / repeated item)
    size_t ref_at = 0;         // byte offset of the first reference (undefined-rule errors)
};

// NOTE(grammar): the parser is a plain recursive descent over bytes. A rule's body runs until the next
// `name ::=` (found by lookahead after a newline) or the end of the text, so rules may span lines and
// alternatives may start a line with `|`. Every error carries the byte offset where it was noticed;
// it becomes line:column only when thrown.
class parser {
public:
    explicit parser(std::string_view text) : s_(text) {}

    grammar run() {
        skip_ws();
        while (i_ < s_.size()) {
            parse_rule();
            skip_ws();
        }
        return finish();
    }

private:
    [[noreturn]] void fail(const std::string & message, size_t at) const {
        int32_t line = 1, column = 1;
        for (size_t k = 0; k < at && k < s_.size(); ++k) {
            if (s_[k] == '\n') { ++line; column = 1; } else { ++column; }
        }
        throw grammar_error("grammar: " + message, line, column);
    }

    bool eof() const { return i_ >= s_.size(); }
    char peek(size_t ahead = 0) const { return i_ + ahead < s_.size() ? s_[i_ + ahead] : '\0'; }

    // Skips blanks and comments; returns true when a newline was crossed.
    bool skip_ws(bool newlines = true) {
        bool crossed = false;
        while (!eof()) {
            const char c = s_[i_];
            if (c == ' ' || c == '\t' || c == '\r') { ++i_; continue; }
            if (c == '\n') {
                if (!newlines) break;
                crossed = true;
                ++i_;
                continue;
            }
            if (c == '#') {
                while (!eof() && s_[i_] != '\n') ++i_;
                continue;
            }
            break;
        }
        return crossed;
    }

    // Lookahead: does `name ::=` start at i_?
    bool at_rule_start() const {
        size_t k = i_;
        while (k < s_.size() && is_name_char(s_[k])) ++k;
        if (k == i_) return false;
        while (k < s_.size() && (s_[k] == ' ' || s_[k] == '\t')) ++k;
        return s_.compare(k, 3, "::=") == 0;
    }

    int32_t rule_id(const std::string & name, size_t at) {
        auto it = ids_.find(name);
        if (it != ids_.end()) return it->second;
        const int32_t id = int32_t(rules_.size());
        rules_.emplace_back();
        rules_.back().name = name;
        rules_.back().ref_at = at;
        ids_.emplace(name, id);
        return id;
    }

    int32_t synthetic_rule(const std::string & parent, size_t at, bool repetition) {
        const int32_t id = int32_t(rules_.size());
        rules_.emplace_back();
        tmp_rule & r = rules_.back();
        r.name = parent + "_" + std::to_string(id);
        r.defined = true;
        r.repetition = repetition;
        r.def_at = at;
        return id;
    }

    std::string parse_name() {
        const size_t start = i_;
        while (!eof() && is_name_char(s_[i_])) ++i_;
        if (i_ == start) fail("expected a rule name", start);
        return std::string(s_.substr(start, i_ - start));
    }

    void parse_rule() {
        const size_t at = i_;
        const std::string name = parse_name();
        skip_ws(false);
        if (s_.compare(i_, 3, "::=") != 0) fail("expected '::=' after rule name '" + name + "'", i_);
        i_ += 3;
        const int32_t id = rule_id(name, at);
        if (rules_[size_t(id)].defined) fail("rule '" + name + "' is defined twice", at);
        rules_[size_t(id)].defined = true;
        rules_[size_t(id)].def_at = at;
        current_ = name;
        std::vector<std::vector<element>> alts = parse_alternatives(false);
        rules_[size_t(id)].alts = std::move(alts);
    }

    std::vector<std::vector<element>> parse_alternatives(bool nested) {
        std::vector<std::vector<element>> alts;
        alts.push_back(parse_sequence(nested));
        while (peek() == '|') {
            ++i_;
            alts.push_back(parse_sequence(nested));
        }
        return alts;
    }

    std::vector<element> parse_sequence(bool nested) {
        std::vector<element> seq;
        for (;;) {
            const bool crossed = skip_ws();
            if (eof()) {
                if (nested) fail("missing ')'", i_);
                break;
            }
            if (!nested && crossed && at_rule_start()) break;
            const char c = peek();
            if (c == '|') break;
            if (c == ')') {
                if (!nested) fail("unexpected ')'", i_);
                break;
            }
            const size_t item_at = i_;
            std::vector<element> item = parse_item();
            parse_postfix(item, item_at);
            if (seq.size() + item.size() > k_max_elements) fail("grammar is too large", item_at);
            seq.insert(seq.end(), item.begin(), item.end());
        }
        return seq;
    }

    std::vector<element> parse_item() {
        const size_t at = i_;
        const char c = peek();
        if (c == '"') return parse_literal();
        if (c == '[') return {element{element_kind::chars, parse_class()}};
        if (c == '.') {
            ++i_;
            return {element{element_kind::chars, intern_set({{0, k_max_code_point}}, false)}};
        }
        if (c == '(') {
            if (++depth_ > k_max_nesting) fail("groups nest too deeply", at);
            ++i_;
            const std::string saved = current_;
            const int32_t id = synthetic_rule(current_, at, false);
            std::vector<std::vector<element>> alts = parse_alternatives(true);
            if (peek() != ')') fail("missing ')'", i_);
            ++i_;
            rules_[size_t(id)].alts = std::move(alts);
            current_ = saved;
            --depth_;
            return {element{element_kind::rule_ref, id}};
        }
        if (is_name_char(c)) {
            const std::string name = parse_name();
            return {element{element_kind::rule_ref, rule_id(name, at)}};
        }
        fail(std::string("unexpected character '") + c + "'", at);
    }

    // Postfix operators apply to the whole preceding item (a literal counts as one item).
    void parse_postfix(std::vector<element> & item, size_t item_at) {
        for (;;) {
            skip_ws(false);
            const size_t at = i_;
            const char c = peek();
            int32_t lo, hi;  // hi = -1: unbounded
            if (c == '*') { lo = 0; hi = -1; ++i_; }
            else if (c == '+') { lo = 1; hi = -1; ++i_; }
            else if (c == '?') { lo = 0; hi = 1; ++i_; }
            else if (c == '{') { ++i_; parse_bounds(at, lo, hi); }
            else return;
            if (item.empty()) continue;  // ""* is still the empty string
            item = repeat(item, lo, hi, item_at);
        }
    }

    int32_t parse_count(size_t at) {
        skip_ws(false);
        const size_t start = i_;
        int64_t v = 0;
        while (!eof() && s_[i_] >= '0' && s_[i_] <= '9') {
            v = v * 10 + (s_[i_] - '0');
            if (v > k_max_repetition) fail("repetition count above " + std::to_string(k_max_repetition), start);
            ++i_;
        }
        if (i_ == start) fail("expected a repetition count", at);
        skip_ws(false);
        return int32_t(v);
    }

    void parse_bounds(size_t at, int32_t & lo, int32_t & hi) {
        lo = parse_count(i_);
        hi = lo;
        if (peek() == ',') {
            ++i_;
            skip_ws(false);
            hi = peek() == '}' ? -1 : parse_count(i_);
        }
        if (peek() != '}') fail("expected '}' to close the repetition", i_);
        ++i_;
        if (hi != -1 && hi < lo) fail("repetition maximum is below its minimum", at);
    }

    std::vector<element> repeat(const std::vector<element> & item, int32_t lo, int32_t hi, size_t at) {
        const size_t copies = size_t(lo) + (hi == -1 ? 1 : size_t(hi - lo));
        if (copies * item.size() > k_max_elements) fail("repetition makes the grammar too large", at);
        std::vector<element> out;
        for (int32_t k = 0; k < lo; ++k) out.insert(out.end(), item.begin(), item.end());
        if (hi == -1) {
            // R ::= item R | ε  (right recursion: the matcher pops it without growing stacks)
            const int32_t r = synthetic_rule(current_, at, true);
            std::vector<element> a = item;
            a.push_back(element{element_kind::rule_ref, r});
            rules_[size_t(r)].alts = {std::move(a), {}};
            out.push_back(element{element_kind::rule_ref, r});
        } else if (hi > lo) {
            // R_k ::= item R_{k-1} | ε, nested so that at most hi - lo more copies match.
            int32_t prev = -1;
            for (int32_t k = 0; k < hi - lo; ++k) {
                const int32_t r = synthetic_rule(current_, at, false);
                std::vector<element> a = item;
                if (prev >= 0) a.push_back(element{element_kind::rule_ref, prev});
                rules_[size_t(r)].alts = {std::move(a), {}};
                prev = r;
            }
            out.push_back(element{element_kind::rule_ref, prev});
        }
        return out;
    }

    uint32_t parse_hex(int n_digits, size_t at) {
        uint32_t v = 0;
        for (int k = 0; k < n_digits; ++k) {
            const char c = peek();
            uint32_t d;
            if (c >= '0' && c <= '9') d = uint32_t(c - '0');
            else if (c >= 'a' && c <= 'f') d = uint32_t(c - 'a' + 10);
            else if (c >= 'A' && c <= 'F') d = uint32_t(c - 'A' + 10);
            else fail("expected " + std::to_string(n_digits) + " hex digits in escape", at);
            v = v * 16 + d;
            ++i_;
        }
        if (v > k_max_code_point) fail("code point above U+10FFFF", at);
        return v;
    }

    // One code point of a literal or class (an escape or one UTF-8 character).
    uint32_t parse_char() {
        const size_t at = i_;
        const auto b = uint8_t(s_[i_]);
        if (b == '\\') {
            ++i_;
            const char e = peek();
            ++i_;
            switch (e) {
                case 'n': return '\n';
                case 'r': return '\r';
                case 't': return '\t';
                case '\\': case '"': case ']': case '[': case '-': case '^': case '/': case '\'': return uint8_t(e);
                case 'x': return parse_hex(2, at);
                case 'u': return parse_hex(4, at);
                case 'U': return parse_hex(8, at);
                default: fail("unknown escape", at);
            }
        }
        if (b < 0x80) { ++i_; return b; }
        const int len = (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 0;
        if (len == 0 || i_ + size_t(len) > s_.size()) fail("invalid UTF-8 in grammar", at);
        uint32_t cp = b & (0x7F >> len);
        for (int k = 1; k < len; ++k) {
            const auto c = uint8_t(s_[i_ + size_t(k)]);
            if ((c & 0xC0) != 0x80) fail("invalid UTF-8 in grammar", at);
            cp = (cp << 6) | (c & 0x3F);
        }
        i_ += size_t(len);
        return cp;
    }

    std::vector<element> parse_literal() {
        const size_t at = i_;
        ++i_;  // opening quote
        std::vector<element> out;
        for (;;) {
            if (eof() || peek() == '\n') fail("unterminated string literal", at);
            if (peek() == '"') { ++i_; break; }
            const uint32_t cp = parse_char();
            out.push_back(element{element_kind::chars, intern_set({{cp, cp}}, false)});
        }
        return out;
    }

    int32_t parse_class() {
        const size_t at = i_;
        ++i_;  // '['
        bool negated = false;
        if (peek() == '^') { negated = true; ++i_; }
        std::vector<std::pair<uint32_t, uint32_t>> ranges;
        for (;;) {
            if (eof() || peek() == '\n') fail("unterminated character class", at);
            if (peek() == ']') { ++i_; break; }
            const size_t char_at = i_;
            const uint32_t lo = parse_char();
            uint32_t hi = lo;
            if (peek() == '-' && peek(1) != ']' && i_ + 1 < s_.size()) {
                ++i_;
                if (eof() || peek() == '\n') fail("unterminated character class", at);
                hi = parse_char();
                if (hi < lo) fail("character range is reversed", char_at);
            }
            ranges.emplace_back(lo, hi);
        }
        if (ranges.empty()) fail("empty character class", at);
        return intern_set(std::move(ranges), negated);
    }

    int32_t intern_set(std::vector<std::pair<uint32_t, uint32_t>> ranges, bool negated) {
        std::sort(ranges.begin(), ranges.end());
        std::vector<std::pair<uint32_t, uint32_t>> merged;
        for (const auto & r : ranges) {
            if (!merged.empty() && r.first <= merged.back().second + 1) merged.back().second = std::max(merged.back().second, r.second);
            else merged.push_back(r);
        }
        if (negated) {
            std::vector<std::pair<uint32_t, uint32_t>> comp;
            uint32_t next = 0;
            for (const auto & r : merged) {
                if (r.first > next) comp.emplace_back(next, r.first - 1);
                next = r.second + 1;
            }
            if (next <= k_max_code_point) comp.emplace_back(next, k_max_code_point);
            merged.swap(comp);
        }
        auto it = set_ids_.find(merged);
        if (it != set_ids_.end()) return it->second;
        char_set cs;
        for (const auto & r : merged) {
            for (uint32_t c = r.first; c <= r.second && c < 128; ++c) cs.ascii[c >> 6] |= uint64_t(1) << (c & 63);
        }
        cs.ranges = merged;
        const int32_t id = int32_t(sets_.size());
        sets_.push_back(std::move(cs));
        set_ids_.emplace(std::move(merged), id);
        return id;
    }

    // Left recursion: a rule that can reach itself in first position (through rules that may match
    // the empty string) would make the matcher's expansion loop forever. The self-reference of an
    // unbounded repetition (R ::= S R | ε with a nullable S) is exempt: going round it without consuming
    // input adds nothing, and the matcher cuts exactly such cycles.
    void check_left_recursion() const {
        const size_t n = rules_.size();
        std::vector<char> nullable(n, 0);
        for (bool changed = true; changed;) {
            changed = false;
            for (size_t r = 0; r < n; ++r) {
                if (nullable[r]) continue;
                for (const auto & alt : rules_[r].alts) {
                    bool all = true;
                    for (const element & e : alt) {
                        if (e.kind == element_kind::chars || !nullable[size_t(e.value)]) { all = false; break; }
                    }
                    if (all) { nullable[r] = 1; changed = true; break; }
                }
            }
        }
        std::vector<std::vector<int32_t>> first(n);   // rules reachable in first position
        for (size_t r = 0; r < n; ++r) {
            for (const auto & alt : rules_[r].alts) {
                for (const element & e : alt) {
                    if (e.kind == element_kind::chars) break;
                    if (!(rules_[r].repetition && e.value == int32_t(r))) first[r].push_back(e.value);
                    if (!nullable[size_t(e.value)]) break;
                }
            }
        }
        std::vector<char> color(n, 0);  // 0 new, 1 on the DFS path, 2 done
        std::vector<std::pair<int32_t, size_t>> path;  // (rule, next edge)
        for (size_t s = 0; s < n; ++s) {
            if (color[s]) continue;
            path.emplace_back(int32_t(s), 0);
            color[s] = 1;
            while (!path.empty()) {
                auto & [r, k] = path.back();
                if (k == first[size_t(r)].size()) {
                    color[size_t(r)] = 2;
                    path.pop_back();
                    continue;
                }
                const int32_t t = first[size_t(r)][k++];
                if (color[size_t(t)] == 1) {
                    const tmp_rule & rt = rules_[size_t(t)];
                    fail("left recursion: rule '" + rt.name + "' can reach itself without consuming input", rt.def_at);
                }
                if (color[size_t(t)] == 0) {
                    color[size_t(t)] = 1;
                    path.emplace_back(t, 0);
                }
            }
        }
    }

    grammar finish() {
        for (const tmp_rule & r : rules_) {
            if (!r.defined) fail("undefined rule '" + r.name + "'", r.ref_at);
        }
        auto root = ids_.find("root");
        if (root == ids_.end()) fail("missing rule 'root'", 0);
        check_left_recursion();

        grammar g;
        g.root = root->second;
        g.sets = std::move(sets_);
        g.rules.resize(rules_.size());
        for (size_t r = 0; r < rules_.size(); ++r) {
            rule & out = g.rules[r];
            out.name = rules_[r].name;
            int32_t line = 1, column = 1;
            for (size_t k = 0; k < rules_[r].def_at && k < s_.size(); ++k) {
                if (s_[k] == '\n') { ++line; column = 1; } else { ++column; }
            }
            out.line = line;
            out.column = column;
            for (const auto & alt : rules_[r].alts) {
                out.alts.push_back(int32_t(g.elements.size()));
                g.elements.insert(g.elements.end(), alt.begin(), alt.end());
                g.elements.push_back(element{element_kind::end, 0});
            }
        }
        return g;
    }

    std::string_view s_;
    size_t i_ = 0;
    std::string current_;  // name of the rule being parsed (names synthetic rules)
    int32_t depth_ = 0;    // open groups (bounds the recursion)
    std::vector<tmp_rule> rules_;
    std::unordered_map<std::string, int32_t> ids_;
    std::vector<char_set> sets_;
    std::map<std::vector<std::pair<uint32_t, uint32_t>>, int32_t> set_ids_;
};

} // namespace

grammar parse_grammar(std::string_view text) {
    parser p(text);
    return p.run();
}

} // namespace tmill::grammar
