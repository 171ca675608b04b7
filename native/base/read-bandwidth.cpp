#include "base/read-bandwidth.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
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

// A range as the whole 8-byte words inside it.
struct word_range {
    const uint64_t * words;
    size_t n;
};

word_range words_of(const byte_range & r) {
    const uintptr_t begin = (reinterpret_cast<uintptr_t>(r.data) + 7) & ~uintptr_t(7);
    const uintptr_t end = (reinterpret_cast<uintptr_t>(r.data) + r.bytes) & ~uintptr_t(7);
    return {reinterpret_cast<const uint64_t *>(begin), end > begin ? (end - begin) / 8 : 0};
}

struct read_result {
    double best_bytes_per_second = 0.0;
    uint64_t sum = 0;   // of every word read, wrapping: the caller may check it
};

// The words of `ranges` laid end to end and cut into many more slices than threads (so a thread that
// started late still gets its share); each pass sums every slice once.
read_result read_passes(const std::vector<word_range> & ranges, int n_threads, int reps) {
    size_t n_words = 0;
    for (const word_range & r : ranges) n_words += r.n;
    const int64_t n_slices = int64_t(n_threads) * 16;
    const size_t slice = (n_words + size_t(n_slices) - 1) / size_t(n_slices);
    std::vector<uint64_t> sums(size_t(n_slices), 0);
    thread_pool pool(n_threads);
    read_result out;
    for (int rep = 0; rep <= reps; ++rep) {  // pass 0 warms the pool and the TLB; it is not counted
        const auto t0 = std::chrono::steady_clock::now();
        pool.parallel_for(n_slices, [&](int64_t s) {
            const size_t begin = std::min(size_t(s) * slice, n_words), end = std::min(begin + slice, n_words);
            uint64_t sum = 0;
            size_t at = 0;   // the first word of the current range in the end-to-end order
            for (const word_range & r : ranges) {
                const size_t lo = std::max(begin, at), hi = std::min(end, at + r.n);
                if (lo < hi) sum += sum_words(r.words + (lo - at), hi - lo);
                at += r.n;
                if (at >= end) break;
            }
            sums[size_t(s)] = sum;
        });
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (rep > 0 && seconds > 0) {
            const double rate = double(n_words * sizeof(uint64_t)) / seconds;
            if (rate > out.best_bytes_per_second) out.best_bytes_per_second = rate;
        }
    }
    for (uint64_t v : sums) out.sum += v;
    return out;
}

void check_counts(int n_threads, int reps) {
    if (n_threads < 1 || reps < 1) throw error(error_code::invalid_argument, "measure_read_bandwidth: threads >= 1 and reps >= 1 expected");
}

} // namespace

double measure_read_bandwidth(size_t bytes, int n_threads, int reps) {
    if (bytes < (size_t(1) << 20)) throw error(error_code::invalid_argument, "measure_read_bandwidth: bytes >= 1 MiB expected");
    check_counts(n_threads, reps);
    const size_t n_words = bytes / sizeof(uint64_t);
    std::vector<uint64_t> buffer(n_words);
    for (size_t i = 0; i < n_words; ++i) buffer[i] = i;
    const read_result r = read_passes({{buffer.data(), n_words}}, n_threads, reps);
    const uint64_t n = n_words;  // 0 + 1 + ... + (n - 1), wrapping like the sums
    const uint64_t expected = n % 2 == 0 ? (n / 2) * (n - 1) : n * ((n - 1) / 2);
    if (r.sum != expected) throw error(error_code::internal, "measure_read_bandwidth: the buffer sum is wrong");
    return r.best_bytes_per_second;
}

double measure_read_bandwidth(const std::vector<byte_range> & ranges, int n_threads, int reps) {
    std::vector<word_range> words;
    size_t bytes = 0;
    for (const byte_range & r : ranges) {
        words.push_back(words_of(r));
        bytes += words.back().n * sizeof(uint64_t);
    }
    if (bytes == 0) throw error(error_code::invalid_argument, "measure_read_bandwidth: no whole 8-byte word to read");
    check_counts(n_threads, reps);
    return read_passes(words, n_threads, reps).best_bytes_per_second;
}

} // namespace tmill
