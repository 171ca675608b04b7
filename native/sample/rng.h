// rng: the per-request random stream. xoshiro256** seeded through splitmix64 from (seed, choice
// index), so a request's draws depend only on its own seed and how many tokens it has sampled —
// never on the batch around it.
#pragma once

#include <cstdint>

namespace tmill {

class rng {
public:
    rng(uint64_t seed, uint64_t stream);
    uint64_t next_u64();
    double next_double();  // uniform in [0, 1), 53 random bits

    static uint64_t random_seed();  // for requests without a seed (std::random_device)

private:
    uint64_t s_[4];  // xoshiro256** state, never all zero
};

} // namespace tmill
