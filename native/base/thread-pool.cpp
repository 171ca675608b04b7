#include "base/thread-pool.h"

#include "base/error.h"

#include <cstdint>
#include <string>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define TM_CPU_RELAX() _mm_pause()
#else
#define TM_CPU_RELAX() ((void)0)
#endif

namespace tmill {

namespace {
constexpr int spin_iterations = 1 << 14;   // ~50-100 us of pause before a worker sleeps
constexpr int pause_iterations = 1 << 10;  // the caller's wait for running tasks: pause only this long, then also yield
} // namespace

thread_pool::thread_pool(int n_threads) : n_threads_(n_threads) {
    TM_CHECK(n_threads >= 1 && n_threads <= 1024, invalid_argument,
             "thread_pool: n_threads must be in [1, 1024], got " + std::to_string(n_threads));
    shares_.reset(new share[size_t(n_threads)]);
    workers_.reserve(size_t(n_threads - 1));
    for (int i = 1; i < n_threads; ++i) workers_.emplace_back([this, i] { worker_main(i); });
}

thread_pool::~thread_pool() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_.store(true, std::memory_order_release);
        generation_.fetch_add(1, std::memory_order_acq_rel);
    }
    wake_.notify_all();
    for (auto & t : workers_) t.join();
}

void thread_pool::drain(std::atomic<uint64_t> & range, bool from_front) {
    uint64_t r = range.load(std::memory_order_acquire);
    for (;;) {
        const uint32_t front = uint32_t(r), back = uint32_t(r >> 32);
        if (front >= back) return;
        // Success means this task of the job that published the word is ours, and that job stays current
        // (fn_ and ctx_ stay its own) until we count the task done.
        const uint64_t claimed = from_front ? r + 1 : r - (uint64_t(1) << 32);
        if (!range.compare_exchange_weak(r, claimed, std::memory_order_acq_rel, std::memory_order_acquire)) continue;
        fn_(ctx_, int64_t(from_front ? front : back - 1));
        done_.fetch_add(1, std::memory_order_acq_rel);
        r = range.load(std::memory_order_acquire);
    }
}

void thread_pool::work_on_current_job(int self) {
    drain(ticket_, true);
    for (int k = 0; k < n_threads_; ++k) drain(shares_[size_t((self + k) % n_threads_)].range, k == 0);
}

void thread_pool::worker_main(int index) {
    uint64_t seen = 0;
    for (;;) {
        uint64_t g = generation_.load(std::memory_order_acquire);
        for (int spin = 0; g == seen && spin < spin_iterations; ++spin) {
            TM_CPU_RELAX();
            g = generation_.load(std::memory_order_acquire);
        }
        if (g == seen) {
            std::unique_lock<std::mutex> lock(mutex_);
            n_sleeping_.fetch_add(1, std::memory_order_relaxed);
            wake_.wait(lock, [&] { return generation_.load(std::memory_order_acquire) != seen; });
            n_sleeping_.fetch_sub(1, std::memory_order_relaxed);
            g = generation_.load(std::memory_order_acquire);
        }
        // The generation is read before the ticket, so a job published after this point bumps it again and
        // this worker looks at the ticket once more.
        seen = g;
        if (stop_.load(std::memory_order_acquire)) return;
        work_on_current_job(index);
    }
}

void thread_pool::run(int64_t n_tasks, task_fn fn, void * ctx) { run_job(n_tasks, fn, ctx, false); }

void thread_pool::run_shares(int64_t n_chunks, task_fn fn, void * ctx) { run_job(n_chunks, fn, ctx, true); }

void thread_pool::run_job(int64_t n_tasks, task_fn fn, void * ctx, bool shares) {
    if (n_tasks <= 0) return;
    if (n_threads_ == 1 || n_tasks == 1) {
        for (int64_t i = 0; i < n_tasks; ++i) fn(ctx, i);
        return;
    }
    TM_CHECK(n_tasks <= int64_t(UINT32_MAX), invalid_argument, "thread_pool: at most 2^32 - 1 tasks per job");
    fn_ = fn;
    ctx_ = ctx;
    done_.store(0, std::memory_order_relaxed);
    // The previous job's ticket and shares are exhausted and all its tasks are done, so no thread reads fn_/ctx_
    // now; the release of the new ticket, or of each share, publishes them with it.
    if (shares) {
        for (int t = 0; t < n_threads_; ++t) {
            const uint64_t front = uint64_t(n_tasks * t / n_threads_), back = uint64_t(n_tasks * (t + 1) / n_threads_);
            shares_[size_t(t)].range.store(back << 32 | front, std::memory_order_release);
        }
    } else {
        ticket_.store(uint64_t(n_tasks) << 32, std::memory_order_release);
    }
    {
        // The lock orders the bump against a worker going to sleep (no lost wake-up).
        std::lock_guard<std::mutex> lock(mutex_);
        generation_.fetch_add(1, std::memory_order_acq_rel);
    }
    if (n_sleeping_.load(std::memory_order_relaxed) > 0) wake_.notify_all();
    work_on_current_job(0);
    // The last running task is usually microseconds from done; a longer wait means its thread lost its core
    // (a shared machine), so after a short spin this thread offers the core to it (or to anyone) while waiting.
    for (int spin = 0; done_.load(std::memory_order_acquire) < n_tasks; ++spin) {
        TM_CPU_RELAX();
        if (spin >= pause_iterations) std::this_thread::yield();
    }
}

} // namespace tmill
