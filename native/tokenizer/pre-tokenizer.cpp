// NOTE(pre-tokenizer): llama.cpp splits BPE text with a list of regexes applied in turn, each one
// re-splitting the pieces of the previous one; a piece boundary is an end of input for the next regex
// (lookaheads and `$` see it as the end). A regex search keeps the text between matches as its own
// piece. We reproduce each regex with a hand-written matcher over code points (leftmost match, first
// alternative that matches, greedy with the backtracking the regex would do). The gpt-2, llama3, qwen2
// and qwen35 regexes are not run as regexes by llama.cpp but by hand-written splitters whose quirks we copy:
// every unmatched code point is its own piece. Unassigned code points (llama.cpp's "undefined" flag,
// Unicode 15.1 tables) are neither \p{L} nor \p{N} nor \s, so every splitter puts them in a
// "[^\s\p{L}\p{N}]+" run: the hand-written ones test a non-zero flag word, which "undefined" is, and
// the regex engine sees them as a non-category placeholder character. Regexes without \p{..} classes are matched by llama.cpp on the raw code
// points with every non-ASCII white space replaced by U+000B, so a literal class never matches one.
#include "tokenizer/pre-tokenizer.h"

#include <cstring>

#include "base/error.h"
#include "tokenizer/unicode.h"

namespace tmill::tok {

namespace {

struct cp_range { uint32_t lo, hi; };

// DeepSeek LLM's letter class (its tokenizer.json regex), as code point ranges.
const cp_range k_deepseek_letters[] = {
    {0x0041, 0x005A}, {0x0061, 0x007A}, {0x00B5, 0x00B5}, {0x00C0, 0x00D6}, {0x00D8, 0x00F6},
    {0x00F8, 0x01BA}, {0x01BC, 0x01BF}, {0x01C4, 0x0293}, {0x0295, 0x02AF}, {0x0370, 0x0373},
    {0x0376, 0x0377}, {0x037B, 0x037D}, {0x037F, 0x037F}, {0x0386, 0x0386}, {0x0388, 0x038A},
    {0x038C, 0x038C}, {0x038E, 0x03A1}, {0x03A3, 0x03F5}, {0x03F7, 0x0481}, {0x048A, 0x052F},
    {0x0531, 0x0556}, {0x10A0, 0x10C5}, {0x13A0, 0x13F5}, {0x13F8, 0x13FD}, {0x1C90, 0x1CBA},
    {0x1CBD, 0x1CBF}, {0x1D00, 0x1D2B}, {0x1D6B, 0x1D77}, {0x1D79, 0x1D9A}, {0x1E00, 0x1F15},
    {0x1F18, 0x1F1D}, {0x1F20, 0x1F45}, {0x1F48, 0x1F4D}, {0x1F50, 0x1F57}, {0x1F59, 0x1F59},
    {0x1F5B, 0x1F5B}, {0x1F5D, 0x1F5D}, {0x1F5F, 0x1F7D}, {0x1F80, 0x1FB4}, {0x1FB6, 0x1FBC},
    {0x1FBE, 0x1FBE}, {0x1FC2, 0x1FC4}, {0x1FC6, 0x1FCC}, {0x1FD0, 0x1FD3}, {0x1FD6, 0x1FDB},
    {0x1FE0, 0x1FEC}, {0x1FF2, 0x1FF4}, {0x1FF6, 0x1FFC}, {0x2102, 0x2102}, {0x2107, 0x2107},
    {0x210A, 0x2113}, {0x2115, 0x2115}, {0x2119, 0x211D}, {0x2124, 0x2124}, {0x2126, 0x2126},
    {0x2128, 0x2128}, {0x212A, 0x212D}, {0x212F, 0x2134}, {0x2139, 0x2139}, {0x213C, 0x213F},
    {0x2145, 0x2149}, {0x214E, 0x214E}, {0x2183, 0x2184}, {0x2C00, 0x2C7B}, {0x2C7E, 0x2CE4},
    {0x2CEB, 0x2CEE}, {0x2CF2, 0x2CF3}, {0xA640, 0xA66D}, {0xA680, 0xA69B}, {0xA722, 0xA76F},
    {0xA771, 0xA787}, {0xA78B, 0xA78E}, {0xAB70, 0xABBF}, {0xFB00, 0xFB06}, {0xFB13, 0xFB17},
    {0xFF21, 0xFF3A}, {0xFF41, 0xFF5A}, {0x10400, 0x1044F}, {0x104B0, 0x104D3}, {0x104D8, 0x104FB},
    {0x10C80, 0x10CB2}, {0x10CC0, 0x10CF2}, {0x118A0, 0x118DF}, {0x1E900, 0x1E943},
};
// DeepSeek LLM's punctuation class: !-/ :-~ ！-／ ：-～ ‘-‟ 　-。
const cp_range k_deepseek_punct[] = {
    {0x0021, 0x002F}, {0x003A, 0x007E}, {0xFF01, 0xFF0F}, {0xFF1A, 0xFF5E}, {0x2018, 0x201F}, {0x3000, 0x3002},
};
// DeepSeek's CJK class: 一-龥 ࠀ-一 가-퟿
const cp_range k_deepseek_cjk[] = {{0x4E00, 0x9FA5}, {0x0800, 0x4E00}, {0xAC00, 0xD7FF}};

template <size_t N>
bool in_ranges(const cp_range (&r)[N], uint32_t c) {
    // A literal class in a regex without \p{..} never sees non-ASCII white space (replaced by U+000B).
    if (c > 0x7F && is_whitespace(c)) return false;
    for (size_t i = 0; i < N; ++i) if (c >= r[i].lo && c <= r[i].hi) return true;
    return false;
}

bool is_ws(uint32_t c) { return is_whitespace(c); }
bool is_rn(uint32_t c) { return c == '\r' || c == '\n'; }
uint32_t ascii_lower(uint32_t c) { return (c >= 'A' && c <= 'Z') ? c + 32 : c; }

// One piece [ini, end) of the text; `at(i)` reads a code point, anything outside reads as "none".
struct piece {
    const uint32_t * c;
    size_t ini, end;
};

// Length of a contraction at pos ('s 't 're 've 'm 'll 'd), 0 when none.
size_t match_contraction(const piece & p, size_t pos, bool fold_case) {
    if (p.c[pos] != '\'' || pos + 1 >= p.end) return 0;
    const uint32_t a = fold_case ? ascii_lower(p.c[pos + 1]) : p.c[pos + 1];
    if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
    if (pos + 2 < p.end) {
        const uint32_t b = fold_case ? ascii_lower(p.c[pos + 2]) : p.c[pos + 2];
        if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return 3;
    }
    return 0;
}

// Whitespace alternatives shared by the gpt2 and llama3 families. With `newlines`:
// \s*[\r\n]+ | \s+(?!\S) | \s+ ; without: \s+(?!\S) only (0 when it cannot match).
size_t match_whitespace(const piece & p, size_t pos, bool newlines) {
    size_t n = 0, last_rn = 0;
    while (pos + n < p.end && is_ws(p.c[pos + n])) {
        if (is_rn(p.c[pos + n])) last_rn = n + 1;
        ++n;
    }
    if (n == 0) return 0;
    if (newlines && last_rn > 0) return last_rn;
    if (pos + n < p.end) {
        if (n > 1) return n - 1;
        return newlines ? n : 0;
    }
    return n;
}

// gpt-2: 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)  (llama.cpp's
// hand-written version: an unmatched code point is a piece of its own).
size_t match_gpt2(const piece & p, size_t pos) {
    if (size_t n = match_contraction(p, pos, false)) return n;
    const uint32_t c = p.c[pos];
    const bool sp = c == ' ';
    const size_t q0 = pos + (sp ? 1 : 0);
    const cpt_class k = q0 < p.end ? classify(p.c[q0]) : cpt_class::undefined;
    const bool k_ws = q0 < p.end && is_ws(p.c[q0]);
    if (k == cpt_class::letter || k == cpt_class::number) {
        size_t q = q0;
        while (q < p.end && classify(p.c[q]) == k) ++q;
        return q - pos;
    }
    if (q0 < p.end && !k_ws) {
        size_t q = q0;
        while (q < p.end) {
            const cpt_class kq = classify(p.c[q]);
            if (is_ws(p.c[q]) || kq == cpt_class::letter || kq == cpt_class::number) break;
            ++q;
        }
        return q - pos;
    }
    if (size_t n = match_whitespace(p, pos, false)) return n;
    return 1;
}

// The llama3 family:
//   (?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?W+|\p{N}{1,D}
//   | ?[^\s W \p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
// where W is \p{L} ([\p{L}\p{M}] for qwen35) and D is 3 (llama3) or 1 (qwen2, qwen35).
// `hand_written` copies llama.cpp's splitters' "no match" rule: an unmatched code point is a piece.
struct llama3_opts { size_t max_digits; bool marks_are_letters; bool hand_written; };

size_t match_llama3(const piece & p, size_t pos, const llama3_opts & o) {
    if (size_t n = match_contraction(p, pos, true)) return n;
    auto is_w = [&](uint32_t x) {
        const cpt_class k = classify(x);
        return k == cpt_class::letter || (o.marks_are_letters && k == cpt_class::mark);
    };
    auto is_punct = [&](uint32_t x) {
        const cpt_class k = classify(x);
        if (is_ws(x) || k == cpt_class::letter || k == cpt_class::number) return false;
        if (o.marks_are_letters && k == cpt_class::mark) return false;
        return true;
    };
    const uint32_t c = p.c[pos];
    const cpt_class kc = classify(c);
    // [^\r\n\p{L}\p{N}]?W+
    if (!is_rn(c) && kc != cpt_class::letter && kc != cpt_class::number && pos + 1 < p.end && is_w(p.c[pos + 1])) {
        size_t q = pos + 1;
        while (q < p.end && is_w(p.c[q])) ++q;
        return q - pos;
    }
    if (is_w(c)) {
        size_t q = pos;
        while (q < p.end && is_w(p.c[q])) ++q;
        return q - pos;
    }
    // \p{N}{1,D}
    if (kc == cpt_class::number) {
        size_t q = pos;
        while (q < p.end && q - pos < o.max_digits && classify(p.c[q]) == cpt_class::number) ++q;
        return q - pos;
    }
    //  ?[^\s W \p{N}]+[\r\n]*
    {
        const size_t q0 = (c == ' ' && pos + 1 < p.end && is_punct(p.c[pos + 1])) ? pos + 1 : pos;
        if (is_punct(p.c[q0])) {
            size_t q = q0;
            while (q < p.end && is_punct(p.c[q])) ++q;
            while (q < p.end && is_rn(p.c[q])) ++q;
            return q - pos;
        }
    }
    if (size_t n = match_whitespace(p, pos, true)) return n;
    return o.hand_written ? 1 : 0;
}

// \s?C+ (with_space) or C+ for a code point predicate C that never accepts white space.
template <typename Pred>
size_t match_run(const piece & p, size_t pos, bool with_space, Pred pred) {
    size_t q = pos;
    if (with_space && is_ws(p.c[q]) && q + 1 < p.end && pred(p.c[q + 1])) ++q;
    if (!pred(p.c[q])) return 0;
    while (q < p.end && pred(p.c[q])) ++q;
    return q - pos;
}

// Applies a matcher to every piece of `in`, writing the new pieces to `out`. With `merge_unmatched`
// (regex search semantics) the text between matches is one piece; without it the matcher itself
// returns 1 for an unmatched code point.
template <typename Match>
void split_pass(const std::vector<uint32_t> & cpts, const std::vector<size_t> & in, std::vector<size_t> & out, Match match) {
    out.clear();
    size_t start = 0;
    for (size_t len : in) {
        const piece p{cpts.data(), start, start + len};
        size_t pos = p.ini, last = p.ini;
        while (pos < p.end) {
            const size_t n = match(p, pos);
            if (n == 0) { ++pos; continue; }
            if (pos > last) out.push_back(pos - last);
            out.push_back(n);
            pos += n;
            last = pos;
        }
        if (p.end > last) out.push_back(p.end - last);
        start = p.end;
    }
}

bool is_p_or(uint32_t c, const char * extra) {
    if (classify(c) == cpt_class::punctuation) return true;
    return c < 0x80 && c != 0 && std::strchr(extra, int(c)) != nullptr;
}

} // namespace

bool pre_type_from_name(std::string_view name, pre_type & out) {
    struct entry { const char * name; pre_type type; };
    static const entry table[] = {
        {"default", pre_type::default_},
        {"llama3", pre_type::llama3}, {"llama-v3", pre_type::llama3}, {"llama-bpe", pre_type::llama3},
        {"falcon3", pre_type::llama3}, {"falcon-h1", pre_type::llama3}, {"pixtral", pre_type::llama3},
        {"midm-2.0", pre_type::llama3}, {"lfm2", pre_type::llama3}, {"dbrx", pre_type::llama3},
        {"smaug-bpe", pre_type::llama3}, {"chatglm-bpe", pre_type::llama3},
        {"qwen2", pre_type::qwen2}, {"deepseek-r1-qwen", pre_type::qwen2}, {"megrez", pre_type::qwen2},
        {"stablelm2", pre_type::qwen2}, {"hunyuan", pre_type::qwen2},
        {"qwen35", pre_type::qwen35},
        {"gpt-2", pre_type::gpt2}, {"phi-2", pre_type::gpt2}, {"jina-es", pre_type::gpt2},
        {"jina-de", pre_type::gpt2}, {"gigachat", pre_type::gpt2}, {"jina-v1-en", pre_type::gpt2},
        {"jina-v2-es", pre_type::gpt2}, {"jina-v2-de", pre_type::gpt2}, {"jina-v2-code", pre_type::gpt2},
        {"roberta-bpe", pre_type::gpt2}, {"mpt", pre_type::gpt2}, {"olmo", pre_type::gpt2},
        {"jais", pre_type::gpt2}, {"trillion", pre_type::gpt2}, {"granite-docling", pre_type::gpt2},
        {"deepseek-llm", pre_type::deepseek_llm},
        {"deepseek-coder", pre_type::deepseek_coder},
        {"starcoder", pre_type::starcoder}, {"refact", pre_type::starcoder}, {"command-r", pre_type::starcoder},
        {"smollm", pre_type::starcoder}, {"codeshell", pre_type::starcoder}, {"exaone", pre_type::starcoder},
        {"minerva-7b", pre_type::starcoder},
        {"falcon", pre_type::falcon},
    };
    for (const auto & e : table) {
        if (name == e.name) { out = e.type; return true; }
    }
    return false;
}

const char * pre_type_name(pre_type type) {
    switch (type) {
        case pre_type::default_: return "default";
        case pre_type::llama3: return "llama3";
        case pre_type::qwen2: return "qwen2";
        case pre_type::qwen35: return "qwen35";
        case pre_type::gpt2: return "gpt-2";
        case pre_type::deepseek_llm: return "deepseek-llm";
        case pre_type::deepseek_coder: return "deepseek-coder";
        case pre_type::starcoder: return "starcoder";
        case pre_type::falcon: return "falcon";
    }
    return "?";
}

void pre_tokenize(pre_type type, const std::vector<uint32_t> & cpts, std::vector<size_t> & lens) {
    lens.clear();
    if (cpts.empty()) return;
    std::vector<size_t> cur{cpts.size()}, next;
    auto run = [&](auto match) { split_pass(cpts, cur, next, match); cur.swap(next); };

    auto gpt2 = [](const piece & p, size_t pos) { return match_gpt2(p, pos); };
    auto single_number = [](const piece & p, size_t pos) -> size_t { return classify(p.c[pos]) == cpt_class::number ? 1 : 0; };
    auto number_run = [](const piece & p, size_t pos) {
        return match_run(p, pos, false, [](uint32_t x) { return classify(x) == cpt_class::number; });
    };
    auto ascii_digit_triples = [](const piece & p, size_t pos) -> size_t {
        auto d = [](uint32_t x) { return x >= '0' && x <= '9'; };
        return (pos + 2 < p.end && d(p.c[pos]) && d(p.c[pos + 1]) && d(p.c[pos + 2])) ? 3 : 0;
    };
    auto single_newline = [](const piece & p, size_t pos) -> size_t { return is_rn(p.c[pos]) ? 1 : 0; };
    auto cjk_run = [](const piece & p, size_t pos) {
        return match_run(p, pos, false, [](uint32_t x) { return in_ranges(k_deepseek_cjk, x); });
    };

    switch (type) {
        case pre_type::llama3:
            run([](const piece & p, size_t pos) { return match_llama3(p, pos, {3, false, true}); });
            break;
        case pre_type::qwen2:
            run([](const piece & p, size_t pos) { return match_llama3(p, pos, {1, false, true}); });
            break;
        case pre_type::qwen35:
            run([](const piece & p, size_t pos) { return match_llama3(p, pos, {1, true, true}); });
            break;
        case pre_type::gpt2:
            run(gpt2);
            break;
        case pre_type::starcoder:
            run(single_number);
            run(gpt2);
            break;
        case pre_type::falcon:
            run([](const piece & p, size_t pos) {
                return match_run(p, pos, false, [](uint32_t x) { return is_p_or(x, "$+<=>^~|`"); });
            });
            run(gpt2);
            run(ascii_digit_triples);
            break;
        case pre_type::deepseek_llm:
            run(single_newline);
            run([](const piece & p, size_t pos) {
                return match_run(p, pos, true, [](uint32_t x) { return in_ranges(k_deepseek_letters, x); });
            });
            run([](const piece & p, size_t pos) {
                return match_run(p, pos, true, [](uint32_t x) { return in_ranges(k_deepseek_punct, x); });
            });
            run([](const piece & p, size_t pos) -> size_t {  // \s+$
                for (size_t q = pos; q < p.end; ++q) if (!is_ws(p.c[q])) return 0;
                return p.end - pos;
            });
            run(cjk_run);
            run(number_run);
            break;
        case pre_type::deepseek_coder:
            run(single_newline);
            run([](const piece & p, size_t pos) {
                return match_run(p, pos, true, [](uint32_t x) { return classify(x) == cpt_class::letter; });
            });
            run([](const piece & p, size_t pos) {
                return match_run(p, pos, true, [](uint32_t x) { return classify(x) == cpt_class::punctuation; });
            });
            run(cjk_run);
            run(single_number);
            break;
        case pre_type::default_:
            run([](const piece & p, size_t pos) {
                return match_run(p, pos, false, [](uint32_t x) { return is_p_or(x, "$+<=>^~|"); });
            });
            run(gpt2);
            run(number_run);
            run(ascii_digit_triples);
            break;
    }
    lens.swap(cur);
}

} // namespace tmill::tok
