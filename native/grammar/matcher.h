// matcher: one sequence's position in a grammar — the set of pushdown stacks still alive after the
// text generated so far — with the two operations decoding needs: the mask of tokens that keep the
// text a valid prefix, and accepting the chosen token.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "grammar/grammar.h"
#include "grammar/token-trie.h"

namespace tmill::grammar {

// A grammar bound to a vocabulary: what compileGrammar(model, text) returns and requests carry.
struct compiled_grammar {
    grammar g;
    std::shared_ptr<const token_trie> trie;
    std::shared_ptr<const tok::vocab> vocab;
};

// Throws grammar_error (grammar_invalid) for bad text.
std::shared_ptr<const compiled_grammar> compile_grammar(std::string_view text, const std::shared_ptr<const tok::vocab> & v);

// Most stacks a matcher keeps; a grammar ambiguous enough to exceed it fails the sequence instead of
// letting the work grow without bound.
constexpr int32_t k_max_stacks = 2048;
// Deepest expansion (rule references followed in first position plus completed rules popped) one code
// point may need; deeper counts as an overflow.
constexpr int32_t k_max_expand_depth = 4096;

// NOTE(grammar): a stack is a chain of nodes (pos, parent) in an arena, hash-consed so that equal
// stacks have equal ids and a stack set deduplicates by id. A stack's top always points at a `chars`
// element; -1 is the empty stack (the root rule is complete). Advancing by a code point moves matching
// tops one element on and expands rule references and completed alternatives (pops) until every top is
// a `chars` element again. Nodes made while computing a mask are rolled back (LIFO, so the open-addressing
// table stays consistent); nodes made by accepting a token are kept — a sequence adds a handful per token.
// Text is UTF-8 bytes decoded incrementally: a token may end inside a code point, which is then kept as
// a partial state and allowed only if some stack can take a code point starting with those bytes.
class matcher {
public:
    explicit matcher(std::shared_ptr<const compiled_grammar> g);

    // Feeds one token's bytes. Returns false (state unchanged) when the token is not in the trie or
    // its bytes leave no stack alive. Clears nothing else; EOS handling is the caller's business.
    bool accept_token(int32_t token);
    // Feeds raw bytes (tests, and the token path). Returns false and leaves the state unchanged when
    // they are rejected.
    bool accept_bytes(std::string_view bytes);

    // Fills allowed[id] (n_vocab entries) with 1 for every trie token whose bytes can follow the text so
    // far and 0 otherwise; returns how many are allowed. No allocation once warm; never throws.
    int32_t fill_mask(uint8_t * allowed);

    // Some stack has matched the whole root and no code point is half-read: the text may end here.
    bool can_end() const;
    // Nothing more can be consumed (every stack is empty).
    bool is_complete() const;
    // An accept pushed the stack count past k_max_stacks; the matcher rejects everything after that.
    bool overflowed() const { return overflowed_; }
    // The last fill_mask() met a token whose bytes would need more than k_max_stacks stacks (that token
    // was left out of the mask).
    bool mask_overflowed() const { return mask_overflowed_; }
    int32_t n_stacks() const { return int32_t(cur_.size()); }
    // The text continues earlier text (the prompt's, or output before a trigger): the SPM first-space
    // rule, which concerns only the first piece of a decoded text, does not apply.
    void start_mid_text() { started_ = true; }

private:
    struct node {
        int32_t pos;     // element index (a `chars` element on a stack top; any element below)
        int32_t parent;  // node id or -1
    };
    // Partial UTF-8: the bits read so far and how many continuation bytes are still missing.
    struct utf8_state {
        uint32_t cp = 0;
        uint8_t need = 0;
        uint8_t next_lo = 0x80, next_hi = 0xBF;  // allowed range of the next continuation byte
    };
    enum class step { dead, partial, advanced };
    enum class utf8_result { bad, more, done };

    int32_t intern(int32_t pos, int32_t parent);
    void rollback(size_t n_nodes);
    void rehash(size_t capacity);
    void push(int32_t stack);
    void expand(int32_t pos, int32_t parent);
    // Advances the stacks (*vec)[begin, begin + n) by `byte` under utf8 state u (updated). On
    // `advanced` the new set is appended to out_ from set_start_ (sorted, distinct); on `partial` the
    // set is unchanged. Indexes vec on every access: out_ may grow while it is read.
    step feed(const std::vector<int32_t> & vec, size_t begin, size_t n, utf8_state & u, uint8_t byte);
    // One byte of UTF-8: `done` with the code point in cp, `more` while a code point is incomplete,
    // `bad` for a byte that cannot continue well-formed UTF-8.
    static utf8_result utf8_step(utf8_state & u, uint8_t byte, uint32_t & cp);
    void advance_cp(const std::vector<int32_t> & vec, size_t begin, size_t n, uint32_t cp);
    bool viable_partial(const std::vector<int32_t> & vec, size_t begin, size_t n, const utf8_state & u) const;

    std::shared_ptr<const compiled_grammar> cg_;
    const grammar * g_;
    const token_trie * trie_;        // null for a grammar compiled without a vocabulary (tests)

    std::vector<node> nodes_;        // (n_nodes) arena; [0, n_committed_) belong to the accepted text
    std::vector<int32_t> table_;     // (power of two ≥ 2 × n_nodes) node id or -1; hash of (pos, parent)
    size_t n_committed_ = 0;

    std::vector<int32_t> cur_;       // (n_stacks) the current stack set, sorted distinct
    utf8_state cur_utf8_;
    bool started_ = false;           // a non-empty piece was accepted (SPM first-space rule)
    bool overflowed_ = false;
    bool overflow_now_ = false;      // set by push() when the set being built passes k_max_stacks
    bool mask_overflowed_ = false;
    int32_t depth_ = 0;              // expand() recursion depth

    // scratch, reused (no allocation once warm)
    std::vector<int32_t> out_;       // stack sets of every depth on the current trie path, back to back
    size_t set_start_ = 0;           // where the set being built starts in out_
    std::vector<int32_t> tmp_;       // accept_bytes' running set
    std::vector<node> expanding_;    // (depth) rule references on the current expand() path
    // The set after a code point depends only on which stacks matched it, not on the code point, so
    // each level remembers the sets its children produced, keyed by the matched-stack bitmask (sets of
    // ≤ 64 stacks): siblings such as every ordinary character inside a JSON string share one result.
    // A remembered set is kept by raising the level's marks past it. A result equal to the level's own
    // set (the fixed point of e.g. `[^"]*`: hash-consing makes it the very same ids) points at that set,
    // and a child level with the same set inherits the remembered results.
    struct cached_set {
        uint64_t matched;
        bool in_out;
        size_t set_begin, set_len;
    };
    static constexpr int k_level_cache = 8;
    struct level {
        bool in_out;                 // set lives in out_ (else it is cur_)
        size_t set_begin, set_len;
        utf8_state u;
        size_t node_mark;            // nodes_ size once this level was computed
        size_t out_mark;             // out_ size once this level was computed
        bool started;
        int n_cached;
        cached_set cached[k_level_cache];
    };
    std::vector<level> levels_;      // (max trie depth + 1)
};

} // namespace tmill::grammar
