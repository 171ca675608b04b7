#include "grammar/token-trie.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <string>

#include "base/error.h"

namespace tmill::grammar {

token_trie::token_trie(const tok::vocab & v) : vocab_(&v), n_vocab_(v.n_tokens()) {
    TM_CHECK(n_vocab_ > 0, invalid_argument, "token_trie: empty vocabulary");
    strip_first_space_ = v.type() == tok::vocab_type::spm && v.add_space_prefix();
    offsets_.resize(size_t(n_vocab_) + 1);
    in_trie_.assign(size_t(n_vocab_), 0);
    std::string text;
    for (int32_t id = 0; id < n_vocab_; ++id) {
        offsets_[size_t(id)] = uint32_t(bytes_.size());
        const tok::token_type t = v.get_type(id);
        if (v.is_special(id) || t == tok::token_type::unused) continue;
        text.clear();
        v.append_piece(id, text);
        if (text.empty() || text.size() > 0xFFFF) continue;
        bytes_.insert(bytes_.end(), text.begin(), text.end());
        in_trie_[size_t(id)] = 1;
    }
    offsets_[size_t(n_vocab_)] = uint32_t(bytes_.size());

    // Sorted pieces enumerate the trie in preorder: each piece opens nodes below its common prefix
    // with the previous one.
    std::vector<int32_t> order;
    for (int32_t id = 0; id < n_vocab_; ++id) if (in_trie_[size_t(id)]) order.push_back(id);
    std::sort(order.begin(), order.end(), [this](int32_t a, int32_t b) {
        const std::string_view pa = piece(a), pb = piece(b);
        return pa != pb ? pa < pb : a < b;
    });
    std::vector<int32_t> open;   // node index at each depth - 1 along the current path
    std::string_view prev;
    for (int32_t id : order) {
        const std::string_view p = piece(id);
        size_t common = 0;
        while (common < p.size() && common < prev.size() && p[common] == prev[common]) ++common;
        while (open.size() > common) {
            nodes_[size_t(open.back())].end = int32_t(nodes_.size());
            open.pop_back();
        }
        for (size_t k = common; k < p.size(); ++k) {
            trie_node n;
            n.byte = uint8_t(p[k]);
            n.depth = uint16_t(k + 1);
            n.tok_begin = n.tok_end = int32_t(tokens_.size());
            open.push_back(int32_t(nodes_.size()));
            nodes_.push_back(n);
            max_depth_ = std::max<uint16_t>(max_depth_, n.depth);
        }
        // Tokens are appended in order, so every token of the deepest open node is contiguous.
        trie_node & leaf = nodes_[size_t(open.back())];
        if (leaf.tok_end != int32_t(tokens_.size())) leaf.tok_begin = int32_t(tokens_.size());
        tokens_.push_back(id);
        leaf.tok_end = int32_t(tokens_.size());
        prev = p;
    }
    while (!open.empty()) {
        nodes_[size_t(open.back())].end = int32_t(nodes_.size());
        open.pop_back();
    }
}

// NOTE(grammar): the cache keeps each trie as long as its vocabulary lives (a weak reference to the
// vocabulary, a strong one to the trie), so requests that compile their grammar one after another do
// not rebuild it; entries of vocabularies that died are dropped on the next call.
std::shared_ptr<const token_trie> token_trie::for_vocab(const std::shared_ptr<const tok::vocab> & v) {
    TM_CHECK(v != nullptr, invalid_argument, "token_trie: no vocabulary");
    static std::mutex mu;
    static std::map<const tok::vocab *, std::pair<std::weak_ptr<const tok::vocab>, std::shared_ptr<const token_trie>>> cache;
    std::lock_guard<std::mutex> lock(mu);
    for (auto e = cache.begin(); e != cache.end();) e = e->second.first.expired() ? cache.erase(e) : std::next(e);
    auto it = cache.find(v.get());
    if (it != cache.end() && it->second.first.lock() == v) return it->second.second;
    auto trie = std::make_shared<const token_trie>(*v);
    cache[v.get()] = {v, trie};
    return trie;
}

} // namespace tmill::grammar
