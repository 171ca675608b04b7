#include "sample/rng.h"

#include <random>

namespace tmill {

static uint64_t splitmix64(uint64_t & x) {
    uint64_t z = (x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

rng::rng(uint64_t seed, uint64_t stream) {
    // Mix the stream index in through a second splitmix step so (seed, 1) and (seed + 1, 0) differ.
    uint64_t x = seed;
    uint64_t y = stream ^ 0x6a09e667f3bcc909ull;
    uint64_t mixed = splitmix64(x) ^ rotl(splitmix64(y), 17);
    for (auto & s : s_) s = splitmix64(mixed);
    if ((s_[0] | s_[1] | s_[2] | s_[3]) == 0) s_[0] = 1;
}

uint64_t rng::next_u64() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
}

double rng::next_double() { return (double)(next_u64() >> 11) * 0x1.0p-53; }

uint64_t rng::random_seed() {
    std::random_device rd;
    return ((uint64_t)rd() << 32) ^ (uint64_t)rd();
}

} // namespace tmill
