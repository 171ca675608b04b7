#include "kv/block-table.h"

#include <algorithm>

#include "base/error.h"

namespace tmill::kv {

block_table table_fork(block_pool & pool, const block_table & parent) {
    for (int32_t b : parent) pool.ref(b);
    return parent;
}

void table_free(block_pool & pool, block_table & table) {
    pool.unref_all(table.data(), static_cast<int32_t>(table.size()));
    table.clear();
}

bool needs_copy_on_write(const block_pool & pool, const block_table & table, int32_t n_computed) {
    const int32_t bs = pool.block_size();
    TM_CHECK(static_cast<int32_t>(table.size()) == blocks_for(n_computed, bs), internal,
             "needs_copy_on_write: table does not match n_computed");
    if (n_computed % bs == 0) return false; // next write starts a fresh block
    return pool.ref_count(table.back()) > 1;
}

int32_t prefix_lookup(const block_pool & pool, const block_hash & root, const int32_t * tokens,
                      int32_t n_tokens, int32_t max_blocks, int32_t * out_blocks, block_hash * out_hashes) {
    const int32_t bs = pool.block_size();
    const int32_t n_full = std::min(n_tokens / bs, max_blocks);
    block_hash parent = root;
    int32_t n_hit = 0;
    for (; n_hit < n_full; ++n_hit) {
        const int32_t * blk = tokens + static_cast<size_t>(n_hit) * bs;
        const block_hash h = hash_block(parent, blk, bs);
        const int32_t b = pool.find_cached(h, parent, blk);
        if (b < 0) break;
        out_blocks[n_hit] = b;
        out_hashes[n_hit] = h;
        parent = h;
    }
    return n_hit;
}

} // namespace tmill::kv
