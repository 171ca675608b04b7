// token_trie: the vocabulary's token byte strings as a prefix trie, built once per vocabulary and
// shared by every grammar compiled for it, so a token mask walks each shared prefix once.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "tokenizer/vocab.h"

namespace tmill::grammar {

// NOTE(grammar): nodes are stored in preorder (children sorted by byte), each with the index one past
// its subtree, so a walk that finds a prefix dead skips its whole subtree with one assignment. The
// implicit root (the empty prefix) is not stored. Special (control / unknown), unused and empty-piece
// tokens are not in the trie: a grammar never allows them (EOS is handled by the mask itself).
struct trie_node {
    uint8_t byte = 0;       // the edge byte into this node
    uint16_t depth = 0;     // ≥ 1: length of the prefix this node spells
    int32_t end = 0;        // one past the last node of this subtree
    int32_t tok_begin = 0;  // tokens[tok_begin, tok_end) spell exactly this prefix
    int32_t tok_end = 0;
};

class token_trie {
public:
    explicit token_trie(const tok::vocab & v);

    // One shared trie per vocabulary, cached while the vocabulary lives.
    static std::shared_ptr<const token_trie> for_vocab(const std::shared_ptr<const tok::vocab> & v);

    int32_t n_vocab() const { return n_vocab_; }
    const std::vector<trie_node> & nodes() const { return nodes_; }
    const std::vector<int32_t> & tokens() const { return tokens_; }
    uint16_t max_depth() const { return max_depth_; }
    // The bytes token `id` adds to the text (empty for tokens outside the trie).
    std::string_view piece(int32_t id) const {
        return std::string_view(bytes_.data() + offsets_[size_t(id)], offsets_[size_t(id) + 1] - offsets_[size_t(id)]);
    }
    bool in_trie(int32_t id) const { return in_trie_[size_t(id)] != 0; }
    // SPM vocabularies with add_space_prefix: the detokenizer drops the first output piece's leading
    // space, so grammars match the text after that drop.
    bool strip_first_space() const { return strip_first_space_; }
    const tok::vocab * vocab() const { return vocab_; }

private:
    const tok::vocab * vocab_;             // identity only (for_vocab's cache key); never dereferenced later
    int32_t n_vocab_ = 0;
    std::vector<trie_node> nodes_;         // (n_nodes) preorder
    std::vector<int32_t> tokens_;          // (n_in_trie) token ids grouped by node
    std::vector<char> bytes_;              // every token's piece, back to back
    std::vector<uint32_t> offsets_;        // (n_vocab + 1) start of each piece in bytes_
    std::vector<uint8_t> in_trie_;         // (n_vocab)
    uint16_t max_depth_ = 0;
    bool strip_first_space_ = false;
};

} // namespace tmill::grammar
