// The paged KV block pool: every block is preallocated at engine creation, ref-counted, and kept in
// one LRU free queue; full blocks can be registered in the prefix cache (hash → block).
//
// The pool only does bookkeeping: block ids index the caller's K/V memory, laid out as
// (n_blocks, block_size, ...) per layer, so a token at position p of a sequence lives at
// (table[p / block_size], p % block_size).
#pragma once

#include <cstdint>
#include <vector>

#include "kv/block-hash.h"

namespace tmill::kv {

constexpr int32_t default_block_size = 16;

// NOTE(block-pool): a block is free iff its ref count is 0, and then it sits in the free queue.
// Free blocks keep their prefix-cache entry (if any) until they are handed out again by allocate():
// the queue head is the least recently freed block and is evicted first. A cached free block that
// gets a prefix hit is taken back out of the queue by ref(). No call allocates memory.
class block_pool {
public:
    // pre: n_blocks >= 1, block_size >= 1.
    block_pool(int32_t n_blocks, int32_t block_size = default_block_size);

    int32_t n_blocks() const { return n_blocks_; }
    int32_t block_size() const { return block_size_; }
    int32_t n_free() const { return n_free_; }          // free blocks, cached (evictable) ones included
    int32_t n_cached() const { return n_cached_; }      // blocks currently registered in the prefix cache
    double usage() const { return 1.0 - static_cast<double>(n_free_) / n_blocks_; } // 0..1

    // Takes the LRU head of the free queue (evicting its cache entry); returns its id with ref 1.
    // pre: n_free() > 0 (throws out_of_memory otherwise).
    int32_t allocate();
    // Adds a reference; a free block (a prefix hit on a cached free block) leaves the free queue.
    void ref(int32_t block);
    // Drops a reference; at 0 the block goes to the tail of the free queue (keeping its cache entry).
    // pre: ref_count(block) > 0.
    void unref(int32_t block);
    // Drops one reference on each of ids[0..n), last to first, so a sequence's tail blocks (the
    // least likely to be shared as a prefix) are evicted before its head blocks.
    void unref_all(const int32_t * ids, int32_t n);

    int32_t ref_count(int32_t block) const;
    bool is_cached(int32_t block) const { return cached_[check_id(block)] != 0; }

    // A cached block whose hash, parent hash and token ids all equal the arguments, or -1.
    // pre: tokens points to block_size ids.
    int32_t find_cached(const block_hash & hash, const block_hash & parent, const int32_t * tokens) const;
    // Registers a full block under hash; false (and nothing changes) when that hash is already
    // cached (by this or another block) or the block is already cached.
    // pre: ref_count(block) > 0; tokens points to block_size ids.
    bool cache_block(int32_t block, const block_hash & hash, const block_hash & parent, const int32_t * tokens);

    // Free queue in eviction order (for tests and debugging): first free block or -1, then next.
    int32_t free_queue_head() const { return head_; }
    int32_t free_queue_next(int32_t block) const { return next_[check_id(block)]; }

    // Makes this pool a shadow of `real`: copies all mutable bookkeeping (no allocation, sizes are
    // equal) while cached token contents stay read through `real`. The scheduler plans on a shadow so
    // planning has no side effects, then replays the same calls on the real pool.
    // pre: same n_blocks and block_size; cache_block() is never called on a shadow.
    void shadow_from(const block_pool & real);

private:
    int32_t check_id(int32_t block) const;
    void queue_remove(int32_t block);
    void queue_push_back(int32_t block);
    // the hash index: open addressing, linear probing, keyed by hash.lo
    uint32_t slot_home(uint64_t key) const;
    void index_insert(uint64_t key, int32_t block);
    void index_erase(int32_t block);
    void evict(int32_t block);

    int32_t n_blocks_;
    int32_t block_size_;
    int32_t n_free_ = 0;
    int32_t n_cached_ = 0;
    int32_t head_ = -1, tail_ = -1;
    std::vector<int32_t> refs_;        // (n_blocks) reference counts
    std::vector<int32_t> prev_;        // (n_blocks) free-queue links, -1 at the ends / when in use
    std::vector<int32_t> next_;        // (n_blocks)
    std::vector<uint8_t> cached_;      // (n_blocks) 1 when registered in the index
    std::vector<block_hash> hash_;     // (n_blocks) chain hash of a cached block
    std::vector<uint64_t> slot_key_;   // (n_slots) hash.lo of the entry, n_slots = pow2 >= 2 * n_blocks
    std::vector<int32_t> slot_block_;  // (n_slots) block id, -1 when empty
    uint32_t slot_mask_ = 0;
    // contents of cached blocks, immutable while cached; a shadow reads the real pool's copy
    std::vector<block_hash> parent_;   // (n_blocks) parent chain hash of a cached block
    std::vector<int32_t> tokens_;      // (n_blocks, block_size) token ids of a cached block
    const block_pool * contents_ = this;
};

} // namespace tmill::kv
