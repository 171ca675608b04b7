// Per-sequence block tables (logical block i → physical block id) and the prefix-cache walk.
// A table is a plain std::vector<int32_t> so the forward pass can read it as a contiguous array.
#pragma once

#include <cstdint>
#include <vector>

#include "kv/block-hash.h"
#include "kv/block-pool.h"

namespace tmill::kv {

using block_table = std::vector<int32_t>; // (ceil(n_positions / block_size)) physical block ids

// Number of blocks that hold n_positions tokens.
inline int32_t blocks_for(int32_t n_positions, int32_t block_size) { return (n_positions + block_size - 1) / block_size; }

// NOTE(block-table): fork is copy-on-write. The child shares every block (each gets one more
// reference); a sequence about to write into a partial last block whose ref count is > 1 must
// first get a private copy: see needs_copy_on_write(). Full blocks are never written again.
// Returns the child table. No data moves here; the caller owns KV memory.
block_table table_fork(block_pool & pool, const block_table & parent);

// Drops this table's references (last block first) and clears it. Shared and cached blocks survive.
void table_free(block_pool & pool, block_table & table);

// True when writing position n_computed would land in a shared partial block.
// pre: table holds blocks_for(n_computed) blocks.
bool needs_copy_on_write(const block_pool & pool, const block_table & table, int32_t n_computed);

// NOTE(prefix-cache): walks the hash chain over the full blocks of tokens[0..n_tokens) and stops at
// the first block that is not cached (or at max_blocks). A hit never covers the whole sequence: the
// caller passes max_blocks = (n_tokens - 1) / block_size so the last token is always computed and
// produces logits. Writes hit block ids to out_blocks and their chain hashes to out_hashes (both
// sized >= max_blocks). Pure lookup: no reference is taken.
int32_t prefix_lookup(const block_pool & pool, const block_hash & root, const int32_t * tokens,
                      int32_t n_tokens, int32_t max_blocks, int32_t * out_blocks, block_hash * out_hashes);

} // namespace tmill::kv
