// thread_pool: every task of a job runs exactly once, through jobs of both kinds (run's ticket, run_shares'
// shares) in any order and any thread count, and a thread whose share is done takes the rest of another's.
#include "check.h"

#include "base/thread-pool.h"

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

using namespace tmill;

namespace {

// Runs one job of n tasks, by shares or by ticket, and checks that each index ran exactly once.
void check_job(thread_pool & pool, int64_t n, bool shares) {
    std::vector<std::atomic<int>> runs(size_t(n > 0 ? n : 0));
    auto f = [&](int64_t i) { runs[size_t(i)].fetch_add(1, std::memory_order_relaxed); };
    if (shares) pool.parallel_for_shares(n, f);
    else pool.parallel_for(n, f);
    int64_t wrong = 0;
    for (auto & r : runs) wrong += r.load() != 1;
    CHECK_EQ(wrong, int64_t(0));
}

} // namespace

TM_TEST("thread pool: every task and every share chunk runs once, jobs of both kinds interleaved") {
    for (int threads : {1, 2, 3, 4, 7}) {
        thread_pool pool(threads);
        int job = 0;
        for (int64_t n : {int64_t(0), int64_t(1), int64_t(2), int64_t(3), int64_t(5), int64_t(16), int64_t(97), int64_t(1000)})
            for (int rep = 0; rep < 40; ++rep, ++job) check_job(pool, n, (job * 7 + rep) % 3 != 0);
    }
}

TM_TEST("thread pool: a thread whose share is done takes the chunks left in another's") {
    // The thread that runs chunk 0 waits there until every other chunk is done, so the job finishes only if the
    // other thread takes the rest of chunk 0's share from its back (and runs its own share).
    thread_pool pool(2);
    const int64_t n = 20;
    std::atomic<int64_t> done{0};
    std::vector<std::atomic<int>> runs(n);
    bool waited_out = true;
    pool.parallel_for_shares(n, [&](int64_t i) {
        if (i == 0) {
            const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
            while (done.load() < n - 1 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
            waited_out = done.load() == n - 1;
        }
        runs[size_t(i)].fetch_add(1);
        done.fetch_add(1);
    });
    CHECK(waited_out);
    int64_t wrong = 0;
    for (auto & r : runs) wrong += r.load() != 1;
    CHECK_EQ(wrong, int64_t(0));
}
