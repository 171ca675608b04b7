// Chained 128-bit hashes of full KV blocks, the keys of the prefix cache.
#pragma once

#include <cstdint>
#include <string>

namespace tmill::kv {

// Two independent 64-bit lanes; a wrong prefix hit needs a full 128-bit collision AND equal block
// token ids (compared on every hit), so in practice it cannot happen.
struct block_hash {
    uint64_t lo = 0;
    uint64_t hi = 0;
    bool operator==(const block_hash & o) const { return lo == o.lo && hi == o.hi; }
    bool operator!=(const block_hash & o) const { return !(*this == o); }
};

// The chain root: the parent hash of a sequence's first block. An empty salt gives the unsalted
// root; any non-empty salt gives a different root, so salted and unsalted requests never share.
block_hash hash_root(const std::string & cache_salt);

// NOTE(block-hash): hash(block i) = H(hash(block i-1), its block_size token ids); block 0 uses
// hash_root(salt) as its parent, so equal hashes mean equal full prefixes (and equal salt).
// pre: tokens points to block_size ids.
block_hash hash_block(const block_hash & parent, const int32_t * tokens, int32_t block_size);

} // namespace tmill::kv
