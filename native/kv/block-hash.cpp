#include "kv/block-hash.h"

namespace tmill::kv {

namespace {

// splitmix64 finaliser: a full-avalanche bijection on 64 bits.
inline uint64_t mix64(uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}

constexpr uint64_t k_lane_lo = 0x9e3779b97f4a7c15ULL;
constexpr uint64_t k_lane_hi = 0xc2b2ae3d27d4eb4fULL;

// Absorbs one 64-bit word into both lanes; the lanes use different constants and rotations so
// they behave as independent hashes.
inline void absorb(block_hash & h, uint64_t w) {
    h.lo = mix64(h.lo ^ (w + k_lane_lo));
    h.hi = mix64((h.hi ^ (w * k_lane_hi)) + ((h.hi << 23) | (h.hi >> 41)));
}

} // namespace

block_hash hash_root(const std::string & cache_salt) {
    block_hash h{0x243f6a8885a308d3ULL, 0x13198a2e03707344ULL};
    if (cache_salt.empty()) return h;
    absorb(h, 0xa4093822299f31d0ULL); // domain tag: "salted", so no salt equals the unsalted root
    absorb(h, static_cast<uint64_t>(cache_salt.size()));
    uint64_t w = 0;
    size_t i = 0;
    for (; i < cache_salt.size(); ++i) {
        w |= static_cast<uint64_t>(static_cast<unsigned char>(cache_salt[i])) << (8 * (i % 8));
        if (i % 8 == 7) {
            absorb(h, w);
            w = 0;
        }
    }
    if (i % 8 != 0) absorb(h, w);
    return h;
}

block_hash hash_block(const block_hash & parent, const int32_t * tokens, int32_t block_size) {
    block_hash h = parent;
    absorb(h, static_cast<uint64_t>(block_size));
    int32_t i = 0;
    for (; i + 1 < block_size; i += 2) {
        uint64_t w = static_cast<uint64_t>(static_cast<uint32_t>(tokens[i])) |
                     (static_cast<uint64_t>(static_cast<uint32_t>(tokens[i + 1])) << 32);
        absorb(h, w);
    }
    if (i < block_size) absorb(h, static_cast<uint64_t>(static_cast<uint32_t>(tokens[i])));
    return h;
}

} // namespace tmill::kv
