// Block pool: allocation order, ref counts, LRU eviction of cached blocks, the hash index,
// copy-on-write forks and the prefix-cache walk (salted and unsalted chains).
#include <vector>

#include "base/error.h"
#include "check.h"
#include "kv/block-pool.h"
#include "kv/block-table.h"

using tmill::kv::block_pool;

namespace {

std::vector<int32_t> free_order(const block_pool & pool) {
    std::vector<int32_t> ids;
    for (int32_t b = pool.free_queue_head(); b >= 0; b = pool.free_queue_next(b)) ids.push_back(b);
    return ids;
}

std::vector<int32_t> block_tokens(int32_t seed) {
    std::vector<int32_t> t(16);
    for (int32_t i = 0; i < 16; ++i) t[i] = seed * 100 + i;
    return t;
}

} // namespace

TM_TEST("kv: block pool alloc, free and ref counts") {
    block_pool pool(4);
    CHECK_EQ(pool.n_free(), 4);
    CHECK_EQ(pool.allocate(), 0);
    CHECK_EQ(pool.allocate(), 1);
    CHECK_EQ(pool.n_free(), 2);
    CHECK_NEAR(pool.usage(), 0.5, 1e-9);
    pool.ref(1);
    CHECK_EQ(pool.ref_count(1), 2);
    pool.unref(1);
    CHECK_EQ(pool.ref_count(1), 1);
    CHECK_EQ(pool.n_free(), 2);
    pool.unref(1);
    CHECK_EQ(pool.n_free(), 3);
    CHECK((free_order(pool) == std::vector<int32_t>{2, 3, 1}));
    CHECK_EQ(pool.allocate(), 2);
    CHECK_EQ(pool.allocate(), 3);
    CHECK_EQ(pool.allocate(), 1);
    CHECK_EQ(pool.n_free(), 0);
    CHECK_THROWS_CODE(pool.allocate(), out_of_memory);
    pool.unref(3);
    CHECK_THROWS_CODE(pool.unref(3), internal); // already free
    CHECK_THROWS_CODE(pool.ref(7), internal);
    CHECK_THROWS_CODE(block_pool(0), invalid_argument);
}

TM_TEST("kv: unref_all frees tail blocks first and cached blocks are evicted in LRU order") {
    block_pool pool(6);
    std::vector<int32_t> a = {pool.allocate(), pool.allocate(), pool.allocate()}; // 0 1 2
    std::vector<int32_t> b = {pool.allocate(), pool.allocate()};                  // 3 4
    tmill::kv::block_hash root = tmill::kv::hash_root("");
    tmill::kv::block_hash parent = root;
    for (int32_t i = 0; i < 3; ++i) {
        auto t = block_tokens(i);
        auto h = tmill::kv::hash_block(parent, t.data(), 16);
        CHECK(pool.cache_block(a[i], h, parent, t.data()));
        parent = h;
    }
    CHECK_EQ(pool.n_cached(), 3);
    tmill::kv::table_free(pool, a); // reverse: 2, 1, 0 appended after 5
    CHECK((free_order(pool) == std::vector<int32_t>{5, 2, 1, 0}));
    tmill::kv::table_free(pool, b);
    CHECK((free_order(pool) == std::vector<int32_t>{5, 2, 1, 0, 4, 3}));
    CHECK_EQ(pool.n_cached(), 3);      // freed cached blocks stay cached
    CHECK_EQ(pool.allocate(), 5);      // uncached head first
    CHECK_EQ(pool.n_cached(), 3);
    CHECK_EQ(pool.allocate(), 2);      // evicts the least recently freed cached block
    CHECK_EQ(pool.n_cached(), 2);
    CHECK(!pool.is_cached(2));
    CHECK(pool.is_cached(1) && pool.is_cached(0));
}

TM_TEST("kv: hash index finds only exact hash, parent and tokens; duplicates are refused") {
    block_pool pool(8);
    auto t0 = block_tokens(7);
    auto root = tmill::kv::hash_root("");
    auto h0 = tmill::kv::hash_block(root, t0.data(), 16);
    const int32_t b0 = pool.allocate();
    CHECK(pool.cache_block(b0, h0, root, t0.data()));
    CHECK_EQ(pool.find_cached(h0, root, t0.data()), b0);
    auto t1 = t0;
    t1[15] += 1; // same hash forced, different tokens: a collision must miss
    CHECK_EQ(pool.find_cached(h0, root, t1.data()), -1);
    CHECK_EQ(pool.find_cached(h0, tmill::kv::hash_root("x"), t0.data()), -1);
    const int32_t b1 = pool.allocate();
    CHECK(!pool.cache_block(b1, h0, root, t0.data())); // same content already cached by b0
    CHECK(!pool.is_cached(b1));
    // entries sharing hash.lo coexist and are told apart by hash.hi
    tmill::kv::block_hash h_lo_twin = h0;
    h_lo_twin.hi ^= 1;
    CHECK(pool.cache_block(b1, h_lo_twin, root, t1.data()));
    CHECK_EQ(pool.find_cached(h0, root, t0.data()), b0);
    CHECK_EQ(pool.find_cached(h_lo_twin, root, t1.data()), b1);
    // evicting b0 keeps b1 reachable (backward-shift deletion keeps probe runs intact)
    pool.unref(b0);
    while (pool.n_free() > 0) pool.allocate();
    CHECK(!pool.is_cached(b0));
    CHECK_EQ(pool.find_cached(h0, root, t0.data()), -1);
    CHECK_EQ(pool.find_cached(h_lo_twin, root, t1.data()), b1);
}

TM_TEST("kv: many cached blocks stay consistent through evictions") {
    block_pool pool(64);
    auto root = tmill::kv::hash_root("");
    std::vector<tmill::kv::block_hash> hashes(64);
    std::vector<std::vector<int32_t>> toks(64);
    for (int32_t i = 0; i < 64; ++i) {
        const int32_t b = pool.allocate();
        toks[b] = block_tokens(i + 1);
        hashes[b] = tmill::kv::hash_block(root, toks[b].data(), 16);
        CHECK(pool.cache_block(b, hashes[b], root, toks[b].data()));
    }
    for (int32_t b = 0; b < 64; ++b) pool.unref(b);
    for (int32_t round = 0; round < 32; ++round) pool.allocate(); // evicts blocks 0..31
    int32_t n_found = 0;
    for (int32_t b = 0; b < 64; ++b) {
        const int32_t f = pool.find_cached(hashes[b], root, toks[b].data());
        if (b < 32) CHECK_EQ(f, -1); else CHECK_EQ(f, b);
        n_found += f >= 0 ? 1 : 0;
    }
    CHECK_EQ(n_found, 32);
    CHECK_EQ(pool.n_cached(), 32);
}

TM_TEST("kv: fork shares blocks and copy-on-write is needed only for a shared partial block") {
    block_pool pool(8);
    tmill::kv::block_table parent = {pool.allocate(), pool.allocate()}; // 20 tokens: block 1 partial
    tmill::kv::block_table child = tmill::kv::table_fork(pool, parent);
    CHECK(child == parent);
    CHECK_EQ(pool.ref_count(parent[0]), 2);
    CHECK_EQ(pool.ref_count(parent[1]), 2);
    CHECK(tmill::kv::needs_copy_on_write(pool, parent, 20));
    CHECK(!tmill::kv::needs_copy_on_write(pool, parent, 32)); // would start a new block (table of 2 = 32 tokens)
    tmill::kv::table_free(pool, child);
    CHECK(child.empty());
    CHECK_EQ(pool.ref_count(parent[1]), 1);
    CHECK(!tmill::kv::needs_copy_on_write(pool, parent, 20));
    CHECK_THROWS_CODE(tmill::kv::needs_copy_on_write(pool, parent, 40), internal);
    tmill::kv::table_free(pool, parent);
    CHECK_EQ(pool.n_free(), 8);
}

TM_TEST("kv: prefix lookup walks the chain, respects max_blocks and the salt") {
    block_pool pool(8);
    std::vector<int32_t> tokens;
    for (int32_t i = 0; i < 50; ++i) tokens.push_back(i * 7 + 1);
    auto root = tmill::kv::hash_root("");
    tmill::kv::block_hash parent = root;
    std::vector<int32_t> ids;
    for (int32_t i = 0; i < 3; ++i) {
        const int32_t b = pool.allocate();
        auto h = tmill::kv::hash_block(parent, tokens.data() + 16 * i, 16);
        pool.cache_block(b, h, parent, tokens.data() + 16 * i);
        parent = h;
        ids.push_back(b);
    }
    std::vector<int32_t> out(8);
    std::vector<tmill::kv::block_hash> out_h(8);
    CHECK_EQ(tmill::kv::prefix_lookup(pool, root, tokens.data(), 50, 8, out.data(), out_h.data()), 3);
    CHECK_EQ(out[0], ids[0]);
    CHECK_EQ(out[2], ids[2]);
    CHECK(out_h[2] == parent);
    CHECK_EQ(tmill::kv::prefix_lookup(pool, root, tokens.data(), 48, 47 / 16, out.data(), out_h.data()), 2);
    CHECK_EQ(tmill::kv::prefix_lookup(pool, tmill::kv::hash_root("s"), tokens.data(), 50, 8, out.data(), out_h.data()), 0);
    CHECK(tmill::kv::hash_root("s") != tmill::kv::hash_root(""));
    CHECK(tmill::kv::hash_root("s") != tmill::kv::hash_root("t"));
    tokens[20] += 1; // second block differs: the chain stops after block 0
    CHECK_EQ(tmill::kv::prefix_lookup(pool, root, tokens.data(), 50, 8, out.data(), out_h.data()), 1);
}
