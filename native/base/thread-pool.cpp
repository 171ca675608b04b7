#include "base/thread-pool.h"

#include "base/error.h"

#include <string>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define TM_CPU_RELAX() _mm_pause()
#else
#define TM_CPU_RELAX() ((void)0)
#endif

namespace tmill {

namespace {
constexpr int spin_iterations = 1 << 14;  // ~50-100 us of pause before a worker sleeps
}

thread_pool::thread_pool(int n_threads) : n_threads_(n_threads) {
    TM_CHECK(n_threads >= 1 && n_threads <= 1024, invalid_argument,
             "thread_pool: n_threads must be in [1, 1024], got " + std::to_string(n_threads));
    workers_.reserve(size_t(n_threads - 1));
    for (int i = 1; i < n_threads; ++i) workers_.emplace_back([this] { worker_main(); });
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

void thread_pool::work_on_current_job() {
    for (;;) {
        const int64_t i = next_task_.fetch_add(1, std::memory_order_relaxed);
        if (i >= n_tasks_) return;
        fn_(ctx_, i);
    }
}

void thread_pool::worker_main() {
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
        seen = g;
        if (stop_.load(std::memory_order_acquire)) return;
        work_on_current_job();
        n_checked_out_.fetch_add(1, std::memory_order_release);
    }
}

void thread_pool::run(int64_t n_tasks, task_fn fn, void * ctx) {
    if (n_tasks <= 0) return;
    if (n_threads_ == 1 || n_tasks == 1) {
        for (int64_t i = 0; i < n_tasks; ++i) fn(ctx, i);
        return;
    }
    n_tasks_ = n_tasks;
    fn_ = fn;
    ctx_ = ctx;
    n_checked_out_.store(0, std::memory_order_relaxed);
    next_task_.store(0, std::memory_order_relaxed);
    {
        // The lock orders the job fields before the generation bump for sleeping workers; spinning
        // workers see them through the release/acquire on generation_.
        std::lock_guard<std::mutex> lock(mutex_);
        generation_.fetch_add(1, std::memory_order_acq_rel);
    }
    if (n_sleeping_.load(std::memory_order_relaxed) > 0) wake_.notify_all();
    work_on_current_job();
    const int n_workers = n_threads_ - 1;
    while (n_checked_out_.load(std::memory_order_acquire) < n_workers) TM_CPU_RELAX();
}

} // namespace tmill
