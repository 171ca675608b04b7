#include "kv/block-pool.h"

#include <algorithm>
#include <string>

#include "base/error.h"

namespace tmill::kv {

block_pool::block_pool(int32_t n_blocks, int32_t block_size) : n_blocks_(n_blocks), block_size_(block_size) {
    TM_CHECK(n_blocks >= 1, invalid_argument, "block_pool: n_blocks must be >= 1, got " + std::to_string(n_blocks));
    TM_CHECK(block_size >= 1, invalid_argument, "block_pool: block_size must be >= 1, got " + std::to_string(block_size));
    const size_t n = static_cast<size_t>(n_blocks);
    refs_.assign(n, 0);
    prev_.assign(n, -1);
    next_.assign(n, -1);
    cached_.assign(n, 0);
    hash_.assign(n, block_hash{});
    parent_.assign(n, block_hash{});
    tokens_.assign(n * static_cast<size_t>(block_size), 0);
    uint32_t n_slots = 2;
    while (n_slots < 2u * static_cast<uint32_t>(n_blocks)) n_slots <<= 1;
    slot_mask_ = n_slots - 1;
    slot_key_.assign(n_slots, 0);
    slot_block_.assign(n_slots, -1);
    // initial queue in id order: block 0 is handed out first
    for (int32_t b = 0; b < n_blocks; ++b) queue_push_back(b);
}

int32_t block_pool::check_id(int32_t block) const {
    TM_CHECK(block >= 0 && block < n_blocks_, internal, "block_pool: bad block id " + std::to_string(block));
    return block;
}

// ---------------------------------------------------------------------------------------------
// free queue (doubly linked through prev_/next_)

void block_pool::queue_remove(int32_t b) {
    if (prev_[b] >= 0) next_[prev_[b]] = next_[b]; else head_ = next_[b];
    if (next_[b] >= 0) prev_[next_[b]] = prev_[b]; else tail_ = prev_[b];
    prev_[b] = next_[b] = -1;
    --n_free_;
}

void block_pool::queue_push_back(int32_t b) {
    prev_[b] = tail_;
    next_[b] = -1;
    if (tail_ >= 0) next_[tail_] = b; else head_ = b;
    tail_ = b;
    ++n_free_;
}

int32_t block_pool::allocate() {
    TM_CHECK(n_free_ > 0, out_of_memory, "block_pool: no free KV block");
    const int32_t b = head_;
    queue_remove(b);
    if (cached_[b]) evict(b);
    refs_[b] = 1;
    return b;
}

void block_pool::ref(int32_t block) {
    const int32_t b = check_id(block);
    if (refs_[b] == 0) queue_remove(b);
    ++refs_[b];
}

void block_pool::unref(int32_t block) {
    const int32_t b = check_id(block);
    TM_CHECK(refs_[b] > 0, internal, "block_pool: unref of free block " + std::to_string(b));
    if (--refs_[b] == 0) queue_push_back(b);
}

void block_pool::unref_all(const int32_t * ids, int32_t n) {
    for (int32_t i = n - 1; i >= 0; --i) unref(ids[i]);
}

int32_t block_pool::ref_count(int32_t block) const { return refs_[check_id(block)]; }

// ---------------------------------------------------------------------------------------------
// prefix-cache index (open addressing keyed by hash.lo; entries with equal lo may coexist)

uint32_t block_pool::slot_home(uint64_t key) const { return static_cast<uint32_t>(key ^ (key >> 32)) & slot_mask_; }

void block_pool::index_insert(uint64_t key, int32_t block) {
    uint32_t i = slot_home(key);
    while (slot_block_[i] >= 0) i = (i + 1) & slot_mask_; // never full: n_slots >= 2 * n_blocks
    slot_key_[i] = key;
    slot_block_[i] = block;
}

// Backward-shift deletion keeps every probe run unbroken without tombstones.
void block_pool::index_erase(int32_t block) {
    uint32_t i = slot_home(hash_[block].lo);
    while (slot_block_[i] != block) {
        TM_CHECK(slot_block_[i] >= 0, internal, "block_pool: cached block missing from index");
        i = (i + 1) & slot_mask_;
    }
    uint32_t j = i;
    for (;;) {
        j = (j + 1) & slot_mask_;
        if (slot_block_[j] < 0) break;
        const uint32_t k = slot_home(slot_key_[j]);
        // move j into the hole at i unless its home k lies cyclically in (i, j]
        const bool k_in_range = (i <= j) ? (k > i && k <= j) : (k > i || k <= j);
        if (!k_in_range) {
            slot_key_[i] = slot_key_[j];
            slot_block_[i] = slot_block_[j];
            i = j;
        }
    }
    slot_block_[i] = -1;
}

void block_pool::evict(int32_t b) {
    index_erase(b);
    cached_[b] = 0;
    --n_cached_;
}

int32_t block_pool::find_cached(const block_hash & hash, const block_hash & parent, const int32_t * tokens) const {
    const size_t bs = static_cast<size_t>(block_size_);
    for (uint32_t i = slot_home(hash.lo); slot_block_[i] >= 0; i = (i + 1) & slot_mask_) {
        if (slot_key_[i] != hash.lo) continue;
        const int32_t b = slot_block_[i];
        if (hash_[b] != hash || contents_->parent_[b] != parent) continue;
        const int32_t * stored = contents_->tokens_.data() + static_cast<size_t>(b) * bs;
        if (std::equal(stored, stored + bs, tokens)) return b;
    }
    return -1;
}

bool block_pool::cache_block(int32_t block, const block_hash & hash, const block_hash & parent, const int32_t * tokens) {
    const int32_t b = check_id(block);
    TM_CHECK(contents_ == this, internal, "block_pool: cache_block on a shadow pool");
    TM_CHECK(refs_[b] > 0, internal, "block_pool: caching a free block " + std::to_string(b));
    if (cached_[b]) return false;
    for (uint32_t i = slot_home(hash.lo); slot_block_[i] >= 0; i = (i + 1) & slot_mask_) {
        if (slot_key_[i] == hash.lo && hash_[slot_block_[i]] == hash) return false;
    }
    hash_[b] = hash;
    parent_[b] = parent;
    std::copy(tokens, tokens + block_size_, tokens_.begin() + static_cast<size_t>(b) * block_size_);
    cached_[b] = 1;
    ++n_cached_;
    index_insert(hash.lo, b);
    return true;
}

void block_pool::shadow_from(const block_pool & real) {
    TM_CHECK(real.n_blocks_ == n_blocks_ && real.block_size_ == block_size_, internal,
             "block_pool: shadow of a pool with a different shape");
    if (contents_ != &real) {
        contents_ = &real;
        std::vector<int32_t>().swap(tokens_);     // a shadow never holds contents of its own
        std::vector<block_hash>().swap(parent_);
    }
    n_free_ = real.n_free_;
    n_cached_ = real.n_cached_;
    head_ = real.head_;
    tail_ = real.tail_;
    std::copy(real.refs_.begin(), real.refs_.end(), refs_.begin());
    std::copy(real.prev_.begin(), real.prev_.end(), prev_.begin());
    std::copy(real.next_.begin(), real.next_.end(), next_.begin());
    std::copy(real.cached_.begin(), real.cached_.end(), cached_.begin());
    std::copy(real.hash_.begin(), real.hash_.end(), hash_.begin());
    std::copy(real.slot_key_.begin(), real.slot_key_.end(), slot_key_.begin());
    std::copy(real.slot_block_.begin(), real.slot_block_.end(), slot_block_.begin());
}

} // namespace tmill::kv
