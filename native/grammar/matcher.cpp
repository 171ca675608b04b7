#include "grammar/matcher.h"

#include <algorithm>
#include <cstring>

namespace tmill::grammar {

std::shared_ptr<const compiled_grammar> compile_grammar(std::string_view text, const std::shared_ptr<const tok::vocab> & v) {
    auto cg = std::make_shared<compiled_grammar>();
    cg->g = parse_grammar(text);
    if (v) {
        cg->trie = token_trie::for_vocab(v);
        cg->vocab = v;
    }
    return cg;
}

namespace {

inline size_t hash_node(int32_t pos, int32_t parent) {
    return (uint64_t(uint32_t(pos)) * 0x9E3779B97F4A7C15ull) ^ (uint64_t(uint32_t(parent)) * 0xC2B2AE3D27D4EB4Full);
}

} // namespace

matcher::matcher(std::shared_ptr<const compiled_grammar> g) : cg_(std::move(g)) {
    TM_CHECK(cg_ != nullptr, invalid_argument, "matcher: no grammar");
    g_ = &cg_->g;
    trie_ = cg_->trie.get();
    TM_CHECK(g_->root >= 0 && size_t(g_->root) < g_->rules.size(), internal, "matcher: grammar has no root");
    nodes_.reserve(4096);
    rehash(8192);
    out_.reserve(4096);
    tmp_.reserve(256);
    expanding_.reserve(64);
    cur_.reserve(256);
    levels_.resize(size_t(trie_ ? trie_->max_depth() : 0) + 1);

    set_start_ = 0;
    overflow_now_ = false;
    for (int32_t alt : g_->rules[size_t(g_->root)].alts) expand(alt, -1);
    std::sort(out_.begin(), out_.end());
    out_.erase(std::unique(out_.begin(), out_.end()), out_.end());
    cur_.assign(out_.begin(), out_.end());
    out_.clear();
    overflowed_ = overflow_now_;
    n_committed_ = nodes_.size();
}

void matcher::rehash(size_t capacity) {
    table_.assign(capacity, -1);
    const size_t mask = capacity - 1;
    for (size_t id = 0; id < nodes_.size(); ++id) {
        size_t h = hash_node(nodes_[id].pos, nodes_[id].parent) & mask;
        while (table_[h] != -1) h = (h + 1) & mask;
        table_[h] = int32_t(id);
    }
}

int32_t matcher::intern(int32_t pos, int32_t parent) {
    size_t mask = table_.size() - 1;
    size_t h = hash_node(pos, parent) & mask;
    while (table_[h] != -1) {
        const node & n = nodes_[size_t(table_[h])];
        if (n.pos == pos && n.parent == parent) return table_[h];
        h = (h + 1) & mask;
    }
    const int32_t id = int32_t(nodes_.size());
    nodes_.push_back(node{pos, parent});
    if (nodes_.size() * 2 > table_.size()) {
        rehash(table_.size() * 2);
    } else {
        table_[h] = id;
    }
    return id;
}

// Removes nodes [n_nodes, size) newest first, so every probe chain that passed a removed slot was
// made by a node removed before it.
void matcher::rollback(size_t n_nodes) {
    const size_t mask = table_.size() - 1;
    while (nodes_.size() > n_nodes) {
        const int32_t id = int32_t(nodes_.size() - 1);
        size_t h = hash_node(nodes_.back().pos, nodes_.back().parent) & mask;
        while (table_[h] != id) h = (h + 1) & mask;
        table_[h] = -1;
        nodes_.pop_back();
    }
}

void matcher::push(int32_t stack) {
    if (out_.size() - set_start_ >= size_t(k_max_stacks)) {
        overflow_now_ = true;
        return;
    }
    out_.push_back(stack);
}

// Expands the stack whose next element is `pos` (below it `parent`) until its top is a chars element,
// pushing every resulting stack. Terminates because the grammar has no left recursion.
void matcher::expand(int32_t pos, int32_t parent) {
    if (overflow_now_) return;
    // A long chain of rules each starting with the next one recurses deeply: past the bound it counts
    // as an overflow (a clear failure) rather than a stack overflow.
    if (depth_ >= k_max_expand_depth) {
        overflow_now_ = true;
        return;
    }
    struct depth_guard {
        int32_t & d;
        explicit depth_guard(int32_t & x) : d(++x) {}
        ~depth_guard() { --d; }
    } guard(depth_);
    const element e = g_->elements[size_t(pos)];
    switch (e.kind) {
        case element_kind::end:
            if (parent < 0) {
                push(-1);
            } else {
                const node p = nodes_[size_t(parent)];
                expand(p.pos, p.parent);
            }
            return;
        case element_kind::chars:
            push(intern(pos, parent));
            return;
        case element_kind::rule_ref: {
            // A reference in tail position continues straight into the caller's continuation, so right
            // recursion (x*, x+) keeps stacks short.
            // Re-entering a reference already being expanded on this path (a repetition of something
            // that matched nothing) could only repeat stacks the outer expansion produces anyway.
            for (const node & x : expanding_) if (x.pos == pos && x.parent == parent) return;
            expanding_.push_back(node{pos, parent});
            const int32_t cont = pos + 1;
            const int32_t below = g_->elements[size_t(cont)].kind == element_kind::end ? parent : intern(cont, parent);
            for (int32_t alt : g_->rules[size_t(e.value)].alts) expand(alt, below);
            expanding_.pop_back();
            return;
        }
    }
}

void matcher::advance_cp(const std::vector<int32_t> & vec, size_t begin, size_t n, uint32_t cp) {
    set_start_ = out_.size();
    for (size_t k = 0; k < n; ++k) {
        const int32_t s = vec[begin + k];
        if (s < 0) continue;
        const node nd = nodes_[size_t(s)];
        if (g_->sets[size_t(g_->elements[size_t(nd.pos)].value)].matches(cp)) expand(nd.pos + 1, nd.parent);
    }
    if (out_.size() - set_start_ > 1) {
        std::sort(out_.begin() + std::ptrdiff_t(set_start_), out_.end());
        out_.erase(std::unique(out_.begin() + std::ptrdiff_t(set_start_), out_.end()), out_.end());
    }
}

bool matcher::viable_partial(const std::vector<int32_t> & vec, size_t begin, size_t n, const utf8_state & u) const {
    const int rest = 6 * (u.need - 1);  // bits after the next continuation byte
    const uint32_t lo = (((u.cp << 6) | (u.next_lo & 0x3Fu)) << rest);
    const uint32_t hi = (((u.cp << 6) | (u.next_hi & 0x3Fu)) << rest) | ((1u << rest) - 1);
    for (size_t k = 0; k < n; ++k) {
        const int32_t s = vec[begin + k];
        if (s < 0) continue;
        if (g_->sets[size_t(g_->elements[size_t(nodes_[size_t(s)].pos)].value)].intersects(lo, hi)) return true;
    }
    return false;
}

matcher::utf8_result matcher::utf8_step(utf8_state & u, uint8_t b, uint32_t & cp) {
    if (u.need == 0) {
        if (b < 0x80) {
            cp = b;
            return utf8_result::done;
        }
        // Lead byte: the well-formed ranges of the Unicode standard (no overlongs, no surrogates).
        u.next_lo = 0x80;
        u.next_hi = 0xBF;
        if (b >= 0xC2 && b <= 0xDF) { u.need = 1; u.cp = b & 0x1Fu; }
        else if (b >= 0xE0 && b <= 0xEF) {
            u.need = 2;
            u.cp = b & 0x0Fu;
            if (b == 0xE0) u.next_lo = 0xA0;
            if (b == 0xED) u.next_hi = 0x9F;
        } else if (b >= 0xF0 && b <= 0xF4) {
            u.need = 3;
            u.cp = b & 0x07u;
            if (b == 0xF0) u.next_lo = 0x90;
            if (b == 0xF4) u.next_hi = 0x8F;
        } else {
            return utf8_result::bad;
        }
        return utf8_result::more;
    }
    if (b < u.next_lo || b > u.next_hi) return utf8_result::bad;
    u.cp = (u.cp << 6) | (b & 0x3Fu);
    --u.need;
    u.next_lo = 0x80;
    u.next_hi = 0xBF;
    if (u.need > 0) return utf8_result::more;
    cp = u.cp;
    u.cp = 0;
    return utf8_result::done;
}

matcher::step matcher::feed(const std::vector<int32_t> & vec, size_t begin, size_t n, utf8_state & u, uint8_t b) {
    uint32_t cp = 0;
    switch (utf8_step(u, b, cp)) {
        case utf8_result::bad: return step::dead;
        case utf8_result::more: return viable_partial(vec, begin, n, u) ? step::partial : step::dead;
        case utf8_result::done: break;
    }
    advance_cp(vec, begin, n, cp);
    return out_.size() > set_start_ ? step::advanced : step::dead;
}

bool matcher::accept_bytes(std::string_view bytes) {
    if (overflowed_) return false;
    const size_t mark = nodes_.size();
    tmp_.assign(cur_.begin(), cur_.end());
    utf8_state u = cur_utf8_;
    bool started = started_;
    for (size_t k = 0; k < bytes.size(); ++k) {
        const auto b = uint8_t(bytes[k]);
        if (!started) {
            started = true;
            if (b == ' ' && trie_ && trie_->strip_first_space()) continue;
        }
        out_.clear();
        overflow_now_ = false;
        const step st = feed(tmp_, 0, tmp_.size(), u, b);
        if (overflow_now_) overflowed_ = true;
        if (st == step::dead || overflow_now_) {
            out_.clear();
            rollback(mark);
            return false;
        }
        if (st == step::advanced) tmp_.assign(out_.begin(), out_.end());
    }
    out_.clear();
    cur_.swap(tmp_);
    cur_utf8_ = u;
    started_ = started;
    n_committed_ = nodes_.size();
    return true;
}

bool matcher::accept_token(int32_t token) {
    if (!trie_ || token < 0 || token >= trie_->n_vocab() || !trie_->in_trie(token)) return false;
    return accept_bytes(trie_->piece(token));
}

bool matcher::can_end() const { return cur_utf8_.need == 0 && !cur_.empty() && cur_.front() == -1; }

bool matcher::is_complete() const { return !cur_.empty() && cur_.back() == -1 && cur_utf8_.need == 0; }

// NOTE(grammar): one preorder pass over the vocabulary trie. levels_[d] holds the stacks after the
// first d bytes of the current trie path; a node whose byte kills every stack skips its subtree, so
// each distinct prefix is advanced at most once per mask.
int32_t matcher::fill_mask(uint8_t * allowed) {
    if (!trie_) return 0;
    std::memset(allowed, 0, size_t(trie_->n_vocab()));
    mask_overflowed_ = false;
    if (overflowed_) return 0;
    out_.clear();
    level & top = levels_[0];
    top.in_out = false;
    top.set_begin = 0;
    top.set_len = cur_.size();
    top.u = cur_utf8_;
    top.node_mark = nodes_.size();
    top.out_mark = 0;
    top.started = started_;
    top.n_cached = 0;
    const std::vector<trie_node> & tn = trie_->nodes();
    const std::vector<int32_t> & toks = trie_->tokens();
    const bool strip = trie_->strip_first_space();
    int32_t n_allowed = 0;
    const int32_t n_nodes = int32_t(tn.size());
    for (int32_t i = 0; i < n_nodes;) {
        const trie_node & nd = tn[size_t(i)];
        level & up = levels_[size_t(nd.depth) - 1];
        rollback(up.node_mark);
        out_.resize(up.out_mark);
        level & here = levels_[nd.depth];
        if (!up.started && strip && nd.byte == ' ') {
            here = up;  // the detokenizer drops this space: it consumes nothing
            here.started = true;
            here.n_cached = 0;
        } else {
            utf8_state u = up.u;
            uint32_t cp = 0;
            const std::vector<int32_t> & vec = up.in_out ? out_ : cur_;
            const utf8_result r = utf8_step(u, nd.byte, cp);
            bool live = false;
            size_t set_begin = up.set_begin, set_len = up.set_len;
            bool in_out = up.in_out;
            if (r == utf8_result::more) {
                live = viable_partial(vec, up.set_begin, up.set_len, u);
            } else if (r == utf8_result::done && up.set_len <= 64) {
                uint64_t matched = 0;
                for (size_t k = 0; k < up.set_len; ++k) {
                    const int32_t s = vec[up.set_begin + k];
                    if (s >= 0 && g_->sets[size_t(g_->elements[size_t(nodes_[size_t(s)].pos)].value)].matches(cp)) {
                        matched |= uint64_t(1) << k;
                    }
                }
                const cached_set * hit = nullptr;
                for (int c = 0; c < up.n_cached && matched != 0; ++c) {
                    if (up.cached[c].matched == matched) { hit = &up.cached[c]; break; }
                }
                if (hit) {
                    live = hit->set_len > 0;
                    in_out = hit->in_out;
                    set_begin = hit->set_begin;
                    set_len = hit->set_len;
                } else if (matched != 0) {
                    set_start_ = out_.size();
                    overflow_now_ = false;
                    for (size_t k = 0; k < up.set_len; ++k) {
                        if (!((matched >> k) & 1)) continue;
                        const node nd_k = nodes_[size_t(vec[up.set_begin + k])];
                        expand(nd_k.pos + 1, nd_k.parent);
                    }
                    if (out_.size() - set_start_ > 1) {
                        std::sort(out_.begin() + std::ptrdiff_t(set_start_), out_.end());
                        out_.erase(std::unique(out_.begin() + std::ptrdiff_t(set_start_), out_.end()), out_.end());
                    }
                    live = !overflow_now_ && out_.size() > set_start_;
                    in_out = true;
                    set_begin = set_start_;
                    set_len = out_.size() - set_start_;
                    const std::vector<int32_t> & upvec = up.in_out ? out_ : cur_;
                    if (live && set_len == up.set_len &&
                        std::equal(out_.begin() + std::ptrdiff_t(set_start_), out_.end(), upvec.begin() + std::ptrdiff_t(up.set_begin))) {
                        // A fixed point: keep the parent's span, drop the copy.
                        rollback(up.node_mark);
                        out_.resize(up.out_mark);
                        in_out = up.in_out;
                        set_begin = up.set_begin;
                    }
                    if (live && up.n_cached < k_level_cache) {
                        up.cached[up.n_cached++] = cached_set{matched, in_out, set_begin, set_len};
                        up.node_mark = nodes_.size();
                        up.out_mark = out_.size();
                    }
                }
            } else if (r == utf8_result::done) {
                overflow_now_ = false;
                advance_cp(vec, up.set_begin, up.set_len, cp);
                live = !overflow_now_ && out_.size() > set_start_;
                in_out = true;
                set_begin = set_start_;
                set_len = out_.size() - set_start_;
            }
            if (!live) {
                mask_overflowed_ = mask_overflowed_ || overflow_now_;
                i = nd.end;
                continue;
            }
            here.in_out = in_out;
            here.set_begin = set_begin;
            here.set_len = set_len;
            here.u = u;
            here.node_mark = nodes_.size();
            here.out_mark = out_.size();
            here.started = true;
            here.n_cached = 0;
            if (in_out == up.in_out && set_begin == up.set_begin && set_len == up.set_len) {
                // Same stacks as the parent: its remembered results (below its marks) hold here too.
                here.n_cached = up.n_cached;
                for (int c = 0; c < up.n_cached; ++c) here.cached[c] = up.cached[c];
            }
        }
        for (int32_t k = nd.tok_begin; k < nd.tok_end; ++k) allowed[toks[size_t(k)]] = 1;
        n_allowed += nd.tok_end - nd.tok_begin;
        ++i;
    }
    rollback(n_committed_);
    out_.clear();
    return n_allowed;
}

} // namespace tmill::grammar
