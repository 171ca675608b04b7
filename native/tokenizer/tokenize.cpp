// NOTE(tokenize): text → ids in three stages, as llama.cpp does it. (1) Partition: added tokens
// (USER_DEFINED always, CONTROL/UNKNOWN only with parse_special) are cut out of the text, longest token
// first, every occurrence, honouring the lstrip/rstrip flags. (2) Each remaining raw fragment is
// tokenized on its own: SPM merges the best-scoring adjacent pair until none is a token (ties: leftmost),
// then falls back to <0xNN> byte tokens; BPE pre-splits into words, maps bytes to GPT-2's printable
// alphabet and merges the lowest-rank pair (ties: leftmost) with a priority queue. (3) BOS/EOS per the
// vocab flags when add_special. All working state is local to the call.
#include <cctype>
#include <queue>

#include "base/error.h"
#include "tokenizer/unicode.h"
#include "tokenizer/vocab.h"

namespace tmill::tok {

namespace {

struct fragment {
    int32_t token;  // -1 for raw text
    size_t off, len;
};

bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

void partition(const vocab & v, std::string_view text, bool parse_special, std::vector<fragment> & frags) {
    frags.clear();
    if (text.empty()) return;
    frags.push_back({-1, 0, text.size()});
    std::vector<fragment> next;  // (n_fragments) the partition after the current token
    for (const int32_t id : v.added_tokens_longest_first()) {
        if (!parse_special && v.is_special(id)) continue;
        const std::string_view tok = v.token_text(id);
        if (tok.empty()) continue;
        bool any = false;
        for (const auto & f : frags) {
            if (f.token < 0 && f.len >= tok.size() && text.substr(f.off, f.len).find(tok) != std::string_view::npos) { any = true; break; }
        }
        if (!any) continue;
        next.clear();
        for (const auto & f : frags) {
            if (f.token >= 0) { next.push_back(f); continue; }
            size_t off = f.off, len = f.len;
            while (true) {
                const size_t m = text.substr(off, len).find(tok);
                if (m == std::string_view::npos) {
                    if (len > 0) next.push_back({-1, off, len});
                    break;
                }
                size_t left_len = m;
                if (v.token_lstrip(id)) while (left_len > 0 && is_space(text[off + left_len - 1])) --left_len;
                if (left_len > 0) next.push_back({-1, off, left_len});
                next.push_back({id, 0, 0});
                size_t r_off = off + m + tok.size(), r_len = len - m - tok.size();
                if (v.token_rstrip(id)) while (r_len > 0 && is_space(text[r_off])) { ++r_off; --r_len; }
                off = r_off;
                len = r_len;
                if (len == 0) break;
            }
        }
        frags.swap(next);
    }
}

// ---- SPM ----

struct spm_symbol {
    int prev, next;
    size_t off, n;  // bytes of the escaped text
};

struct spm_bigram {
    float score;
    int left, right;
    size_t size;
};

struct spm_less {
    bool operator()(const spm_bigram & a, const spm_bigram & b) const {
        return a.score < b.score || (a.score == b.score && a.left > b.left);
    }
};

void tokenize_spm_chunk(const vocab & v, std::string_view s, std::vector<spm_symbol> & sym, std::vector<int32_t> & out) {
    sym.clear();
    sym.reserve(s.size());
    for (size_t off = 0; off < s.size();) {
        const size_t n = std::min(utf8_len(uint8_t(s[off])), s.size() - off);
        const int idx = int(sym.size());
        sym.push_back({idx - 1, off + n == s.size() ? -1 : idx + 1, off, n});
        off += n;
    }
    std::priority_queue<spm_bigram, std::vector<spm_bigram>, spm_less> queue;  // best score on top
    auto try_add = [&](int l, int r) {
        if (l < 0 || r < 0) return;
        const std::string_view t(s.data() + sym[size_t(l)].off, sym[size_t(l)].n + sym[size_t(r)].n);
        const int32_t id = v.text_to_token(t);
        if (id < 0) return;
        queue.push({v.score(id), l, r, t.size()});
    };
    for (int i = 1; i < int(sym.size()); ++i) try_add(i - 1, i);
    while (!queue.empty()) {
        const spm_bigram b = queue.top();
        queue.pop();
        auto & l = sym[size_t(b.left)];
        auto & r = sym[size_t(b.right)];
        if (l.n == 0 || r.n == 0 || l.n + r.n != b.size) continue;  // stale
        l.n += r.n;
        r.n = 0;
        l.next = r.next;
        if (r.next >= 0) sym[size_t(r.next)].prev = b.left;
        try_add(l.prev, b.left);
        try_add(b.left, l.next);
    }
    for (int i = sym.empty() ? -1 : 0; i != -1; i = sym[size_t(i)].next) {
        const auto & x = sym[size_t(i)];
        const int32_t id = v.text_to_token(std::string_view(s.data() + x.off, x.n));
        if (id >= 0) { out.push_back(id); continue; }
        for (size_t k = 0; k < x.n; ++k) {
            int32_t b = v.byte_to_token(uint8_t(s[x.off + k]));
            if (b < 0) b = v.unk();
            TM_CHECK(b >= 0, tokenizer, "byte " + std::to_string(int(uint8_t(s[x.off + k]))) +
                     " has no byte token and the vocabulary has no unknown token");
            out.push_back(b);
        }
    }
}

// When no token has "▁" after another character (vocab::spm_space_bounded), no merge can cross the
// start of a "▁" run, so the text is cut there and each piece merged on its own: the same result with
// small queues instead of one queue over the whole text.
void tokenize_spm(const vocab & v, const std::string & s, std::vector<int32_t> & out) {
    std::vector<spm_symbol> sym;  // (n_chars of a chunk) reused across chunks
    if (!v.spm_space_bounded()) { tokenize_spm_chunk(v, s, sym, out); return; }
    static const char k_space[] = "\xE2\x96\x81";
    size_t begin = 0;
    for (size_t i = 3; i + 3 <= s.size(); ++i) {
        if (s.compare(i, 3, k_space) == 0 && s.compare(i - 3, 3, k_space) != 0) {
            tokenize_spm_chunk(v, std::string_view(s).substr(begin, i - begin), sym, out);
            begin = i;
        }
    }
    tokenize_spm_chunk(v, std::string_view(s).substr(begin), sym, out);
}

// ---- BPE ----

struct bpe_symbol {
    int32_t sym;    // token id of the text, -1 when it is not a token
    int prev, next;
    uint32_t off, n;  // bytes of the encoded word
};

struct bpe_bigram {
    int32_t rank;
    int left, right;
    int32_t lsym, rsym, result;
};

struct bpe_greater {
    bool operator()(const bpe_bigram & a, const bpe_bigram & b) const {
        return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
    }
};

struct bpe_session {
    const vocab & v;
    std::vector<uint32_t> cpts;  // (n_cpts) the fragment as code points
    std::vector<size_t> lens;    // (n_words) code points per word
    std::string word;  // the byte-level encoded word
    std::string utf8;
    std::vector<bpe_symbol> sym;   // (n_chars of the word) linked list of merged symbols
    std::vector<bpe_bigram> heap;  // min-heap on (rank, left)

    void add_bigram(int l, int r) {
        if (l < 0 || r < 0) return;
        int32_t rank, result;
        if (!v.find_merge(sym[size_t(l)].sym, sym[size_t(r)].sym, rank, result)) return;
        heap.push_back({rank, l, r, sym[size_t(l)].sym, sym[size_t(r)].sym, result});
        std::push_heap(heap.begin(), heap.end(), bpe_greater());
    }

    void emit_word(std::vector<int32_t> & out) {
        if (v.ignore_merges()) {
            const int32_t id = v.text_to_token(word);
            if (id >= 0) { out.push_back(id); return; }
        }
        sym.clear();
        heap.clear();
        for (size_t off = 0; off < word.size();) {
            const size_t n = std::min(utf8_len(uint8_t(word[off])), word.size() - off);
            const int idx = int(sym.size());
            sym.push_back({v.text_to_token(std::string_view(word.data() + off, n)), idx - 1,
                           off + n == word.size() ? -1 : idx + 1, uint32_t(off), uint32_t(n)});
            off += n;
        }
        for (int i = 1; i < int(sym.size()); ++i) add_bigram(i - 1, i);
        while (!heap.empty()) {
            std::pop_heap(heap.begin(), heap.end(), bpe_greater());
            const bpe_bigram b = heap.back();
            heap.pop_back();
            auto & l = sym[size_t(b.left)];
            auto & r = sym[size_t(b.right)];
            if (l.n == 0 || r.n == 0 || l.sym != b.lsym || r.sym != b.rsym) continue;  // stale
            l.n += r.n;
            l.sym = b.result;
            r.n = 0;
            l.next = r.next;
            if (r.next >= 0) sym[size_t(r.next)].prev = b.left;
            add_bigram(l.prev, b.left);
            add_bigram(b.left, l.next);
        }
        for (const auto & x : sym) {
            if (x.n == 0) continue;
            const std::string_view t(word.data() + x.off, x.n);
            const int32_t id = v.text_to_token(t);
            if (id >= 0) { out.push_back(id); continue; }
            for (char c : t) {  // llama.cpp: single bytes that happen to be tokens, others dropped
                const int32_t b = v.text_to_token(std::string_view(&c, 1));
                if (b >= 0) out.push_back(b);
            }
        }
    }

    void tokenize(std::string_view text, std::vector<int32_t> & out) {
        decode_utf8(text, cpts);
        pre_tokenize(v.pre(), cpts, lens);
        size_t start = 0;
        for (const size_t len : lens) {
            utf8.clear();
            for (size_t i = start; i < start + len; ++i) append_utf8(cpts[i], utf8);
            word.clear();
            for (const char c : utf8) append_utf8(byte_to_cpt(uint8_t(c)), word);
            start += len;
            emit_word(out);
        }
    }
};

} // namespace

std::vector<int32_t> vocab::tokenize(std::string_view text, bool add_special, bool parse_special) const {
    std::vector<int32_t> out;
    tokenize(text, add_special, parse_special, out);
    return out;
}

void vocab::tokenize(std::string_view text, bool add_special, bool parse_special, std::vector<int32_t> & out) const {
    out.clear();
    std::vector<fragment> frags;  // (n_fragments) raw text and added tokens, in order
    partition(*this, text, parse_special, frags);
    if (add_special && add_bos_) out.push_back(bos_);
    if (type_ == vocab_type::spm) {
        bool prev_special = true;  // the first raw fragment gets the space prefix
        std::string s;
        for (const auto & f : frags) {
            if (f.token >= 0) { out.push_back(f.token); prev_special = true; continue; }
            s.clear();
            if (add_space_prefix_ && prev_special) s.append("\xE2\x96\x81");
            for (const char c : text.substr(f.off, f.len)) {
                if (c == ' ') s.append("\xE2\x96\x81"); else s.push_back(c);
            }
            tokenize_spm(*this, s, out);
            prev_special = false;
        }
    } else {
        bpe_session session{*this, {}, {}, {}, {}, {}, {}};
        for (const auto & f : frags) {
            if (f.token >= 0) { out.push_back(f.token); continue; }
            session.tokenize(text.substr(f.off, f.len), out);
        }
    }
    if (add_special && add_eos_) out.push_back(eos_);
}

} // namespace tmill::tok
