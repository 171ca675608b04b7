// token_counter: occurrence counts of token ids in one sequence, sized at admission so counting a
// new token never allocates. Open addressing over a power-of-two table; `ids` lists distinct tokens
// in first-seen order so penalties visit only tokens that occurred.
#pragma once

#include <cstdint>
#include <vector>

namespace tmill {

class token_counter {
public:
    // pre: max_distinct ≥ 0 bounds the number of distinct ids ever added.
    explicit token_counter(int32_t max_distinct) {
        size_t cap = 16;
        while (cap < (size_t)max_distinct * 2 + 2) cap <<= 1;
        keys_.assign(cap, -1);
        counts_.assign(cap, 0);
        ids_.reserve((size_t)max_distinct + 1);
        capacity_ = max_distinct + 1;
    }

    // Returns false (and counts nothing) when the table is full; the caller sized it so that cannot
    // happen for a well-formed sequence.
    bool add(int32_t id) {
        size_t mask = keys_.size() - 1;
        size_t h = ((uint32_t)id * 2654435761u) & mask;
        while (keys_[h] != -1 && keys_[h] != id) h = (h + 1) & mask;
        if (keys_[h] == -1) {
            if ((int32_t)ids_.size() >= capacity_) return false;
            keys_[h] = id;
            ids_.push_back(id);
        }
        ++counts_[h];
        return true;
    }

    int32_t count(int32_t id) const {
        size_t mask = keys_.size() - 1;
        size_t h = ((uint32_t)id * 2654435761u) & mask;
        while (keys_[h] != -1) {
            if (keys_[h] == id) return counts_[h];
            h = (h + 1) & mask;
        }
        return 0;
    }

    const std::vector<int32_t> & ids() const { return ids_; }

private:
    std::vector<int32_t> keys_;    // (cap) token id or -1
    std::vector<int32_t> counts_;  // (cap) occurrences of keys_[i]
    std::vector<int32_t> ids_;     // (n_distinct) distinct ids, first-seen order
    int32_t capacity_ = 0;
};

} // namespace tmill
