// tmill::thread_pool — a fixed set of worker threads created once; parallel_for runs n tasks on them
// (the calling thread works too) and returns when all are done.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace tmill {

// NOTE(thread-pool): one job at a time. A job is (fn, ctx, n_tasks); tasks are claimed from an
// atomic counter, so which thread runs a task varies but every task runs exactly once. run() returns
// only after every worker has checked out of the job, so no worker can carry a stale view of one
// job into the next. Callers that
// need thread-count-independent results must make each task's output depend only on its index.
// Workers spin briefly on the job generation before sleeping on a condition variable: decode issues
// hundreds of small jobs per token and a futex wake per job would dominate.
class thread_pool {
public:
    using task_fn = void (*)(void * ctx, int64_t task);

    // n_threads >= 1 (total, including the caller of parallel_for).
    explicit thread_pool(int n_threads);
    ~thread_pool();
    thread_pool(const thread_pool &) = delete;
    thread_pool & operator=(const thread_pool &) = delete;

    int n_threads() const { return n_threads_; }

    // Runs fn(ctx, i) for i in [0, n_tasks). Not reentrant: call from one thread at a time, and not
    // from inside a task. Exceptions must not escape fn.
    void run(int64_t n_tasks, task_fn fn, void * ctx);

    // Convenience wrapper: f(i) for i in [0, n_tasks); f is called by reference, nothing is allocated.
    template <typename F>
    void parallel_for(int64_t n_tasks, F && f) {
        using fn_type = typename std::remove_reference<F>::type;
        run(n_tasks, [](void * c, int64_t i) { (*static_cast<fn_type *>(c))(i); },
            const_cast<void *>(static_cast<const void *>(&f)));
    }

private:
    void worker_main();
    void work_on_current_job();

    int n_threads_;
    std::vector<std::thread> workers_;     // (n_threads - 1)
    std::mutex mutex_;
    std::condition_variable wake_;
    std::atomic<uint64_t> generation_{0};  // bumped once per job
    std::atomic<bool> stop_{false};
    std::atomic<int64_t> next_task_{0};
    std::atomic<int> n_checked_out_{0};  // workers finished with the current job
    std::atomic<int> n_sleeping_{0};
    int64_t n_tasks_ = 0;
    task_fn fn_ = nullptr;
    void * ctx_ = nullptr;
};

} // namespace tmill
