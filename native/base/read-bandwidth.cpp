#include "base/read-bandwidth.h"

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "base/error.h"
#include "base/thread-pool.h"

namespace tmill {

namespace {

// Four independent sums so the loads are not serialised behind one add chain; the compiler vectorises
// the loop. The result is kept (written out) so the reads cannot be optimised away.
uint64_t sum_words(const uint64_t * p, size_t n) {
    uint64_t a = 0, b = 0, c = 0, d = 0;
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        a += p[i];
        b += p[i + 1];
        c += p[i + 2];
        d += p[i + 3];
    }
    for (; i < n; ++i) a += p[i];
    return a + b + c + d;
}

} // namespace

double measure_read_bandwidth(size_t bytes, int n_threads, int reps) {
    if (bytes < (size_t(1) << 20) || n_threads < 1 || reps < 1) {
        throw error(error_code::invalid_argument, "measure_read_bandwidth: bytes >= 1 MiB, threads >= 1 and reps >= 1 expected");
    }
    const size_t n_words = bytes / sizeof(uint64_t);
    std::vector<uint64_t> buffer(n_words);
    for (size_t i = 0; i < n_words; ++i) buffer[i] = i;
    thread_pool pool(n_threads);
    // Many more slices than threads so a thread that started late still gets its share of the work.
    const int64_t n_slices = int64_t(n_threads) * 16;
    const size_t slice = (n_words + size_t(n_slices) - 1) / size_t(n_slices);
    std::vector<uint64_t> sums(size_t(n_slices), 0);
    double best = 0.0;
    for (int rep = 0; rep <= reps; ++rep) {  // pass 0 warms the pool and the TLB; it is not counted
        const auto t0 = std::chrono::steady_clock::now();
        pool.parallel_for(n_slices, [&](int64_t s) {
            const size_t begin = size_t(s) * slice;
            const size_t end = begin + slice < n_words ? begin + slice : n_words;
            sums[size_t(s)] = begin < end ? sum_words(buffer.data() + begin, end - begin) : 0;
        });
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (rep > 0 && seconds > 0) {
            const double rate = double(n_words * sizeof(uint64_t)) / seconds;
            if (rate > best) best = rate;
        }
    }
    uint64_t check = 0;
    for (uint64_t v : sums) check += v;
    const uint64_t n = n_words;  // 0 + 1 + ... + (n - 1), wrapping like the sums
    const uint64_t expected = n % 2 == 0 ? (n / 2) * (n - 1) : n * ((n - 1) / 2);
    if (check != expected) throw error(error_code::internal, "measure_read_bandwidth: the buffer sum is wrong");
    return best;
}

} // namespace tmill
