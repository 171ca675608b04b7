// Flat open-addressing hash indexes for the vocab: text → token id and (left, right) symbol pair →
// merge. NOTE(hash-index): linear probing over a power-of-two table at most half full, so a lookup is
// usually one cache line; entries are never removed. The text index stores only (hash, id) and
// compares against the vocab's text arena through a caller-supplied accessor.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace tmill::tok {

inline uint64_t hash_bytes(std::string_view s) {
    uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a, then a final mix so low bits are usable
    for (const char c : s) { h ^= uint8_t(c); h *= 0x100000001b3ull; }
    h ^= h >> 33; h *= 0xff51afd7ed558ccdull; h ^= h >> 33;
    return h;
}

inline size_t table_size_for(size_t n) {
    size_t cap = 16;
    while (cap < n * 2) cap <<= 1;
    return cap;
}

class text_index {
public:
    // Text(id) must return the text of token `id`.
    template <typename Text>
    void build(int32_t n, Text text) {
        slots_.assign(table_size_for(size_t(n)), slot{0, -1});
        mask_ = slots_.size() - 1;
        for (int32_t id = 0; id < n; ++id) {
            const std::string_view t = text(id);
            const uint64_t h = hash_bytes(t);
            size_t i = size_t(h) & mask_;
            while (slots_[i].id >= 0 && !(slots_[i].hash == uint32_t(h >> 32) && text(slots_[i].id) == t)) i = (i + 1) & mask_;
            slots_[i] = slot{uint32_t(h >> 32), id};  // a duplicate text: the last id wins (as llama.cpp)
        }
    }
    template <typename Text>
    int32_t find(std::string_view t, Text text) const { return find_hashed(t, hash_bytes(t), text); }
    // For batched lookups: prefetch the slot of a hash computed ahead of time.
    void prefetch(uint64_t h) const { if (!slots_.empty()) __builtin_prefetch(&slots_[size_t(h) & mask_]); }
    template <typename Text>
    int32_t find_hashed(std::string_view t, uint64_t h, Text text) const {
        if (slots_.empty()) return -1;
        for (size_t i = size_t(h) & mask_;; i = (i + 1) & mask_) {
            const slot & s = slots_[i];
            if (s.id < 0) return -1;
            if (s.hash == uint32_t(h >> 32) && text(s.id) == t) return s.id;
        }
    }

private:
    struct slot { uint32_t hash; int32_t id; };
    std::vector<slot> slots_;  // (capacity) id -1 = empty
    size_t mask_ = 0;
};

class pair_index {
public:
    void reserve(size_t n) {
        slots_.assign(table_size_for(n), slot{k_empty, 0, 0});
        mask_ = slots_.size() - 1;
    }
    // Keeps the first value inserted for a key (lowest merge rank). Precondition: reserve(n) with n at
    // least the number of inserts.
    void prefetch(int32_t l, int32_t r) const { __builtin_prefetch(&slots_[mix(make_key(l, r)) & mask_]); }
    void insert(int32_t l, int32_t r, int32_t rank, int32_t result) {
        const uint64_t key = make_key(l, r);
        for (size_t i = mix(key) & mask_;; i = (i + 1) & mask_) {
            if (slots_[i].key == key) return;
            if (slots_[i].key == k_empty) { slots_[i] = slot{key, rank, result}; return; }
        }
    }
    bool find(int32_t l, int32_t r, int32_t & rank, int32_t & result) const {
        if (slots_.empty() || l < 0 || r < 0) return false;
        const uint64_t key = make_key(l, r);
        for (size_t i = mix(key) & mask_;; i = (i + 1) & mask_) {
            const slot & s = slots_[i];
            if (s.key == key) { rank = s.rank; result = s.result; return true; }
            if (s.key == k_empty) return false;
        }
    }

private:
    static constexpr uint64_t k_empty = ~uint64_t(0);
    static uint64_t make_key(int32_t l, int32_t r) { return (uint64_t(uint32_t(l)) << 32) | uint32_t(r); }
    static size_t mix(uint64_t k) { k ^= k >> 31; k *= 0x9E3779B97F4A7C15ull; return size_t(k ^ (k >> 29)); }
    struct slot { uint64_t key; int32_t rank, result; };
    std::vector<slot> slots_;  // (capacity)
    size_t mask_ = 0;
};

} // namespace tmill::tok
