// tmill::thread_pool — a fixed set of worker threads created once; parallel_for runs n tasks on them
// (the calling thread works too) and returns when all are done.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace tmill {

// NOTE(thread-pool): one job at a time. A job is (fn, ctx, n_tasks); its tasks are claimed by compare-and-swap
// on one 64-bit ticket, (n_tasks << 32) | next unclaimed index, so every task runs exactly once, and a thread
// reads fn and ctx only after a successful claim — while that task is unfinished its job is the current one.
// run() returns when the job's finished-task count reaches n_tasks: it waits only for tasks that a thread is
// actually running, never for a worker that has not yet been scheduled to look at the job. A worker that
// wakes late finds the ticket exhausted (or a later job's, whose tasks it may then run correctly, since the
// claim and the fields belong to the same job). On a machine shared with other processes that matters: a
// descheduled worker no longer holds up every job of a decode step (measured under load ~11 on 2 cores, the
// old check-out wait made 2 threads slower than 1). Callers that need thread-count-independent results must
// make each task's output depend only on its index.
// NOTE(thread-pool-shares): run_shares hands each thread a contiguous share of the job's chunks, which it takes
// from the front, in order (one stream of weights a thread, as one task a thread gives); a thread whose share is
// done takes the chunks left in the others' from their backs. Each share is one 64-bit word, (back << 32) |
// front, changed by compare-and-swap: a claim is valid only while front < back, so it is as self-describing as
// a ticket claim and a late worker can take a chunk only of the job that owns the word then. Every chunk runs
// once; which thread runs it is not fixed, so callers make each chunk's output depend only on its index.
// Workers spin briefly on the job generation before sleeping on a condition variable: decode issues hundreds
// of small jobs per token and a futex wake per job would dominate. The caller, once no task is left to claim,
// spins briefly for the running ones and then yields its core while it waits.
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
    // from inside a task. Exceptions must not escape fn. pre: n_tasks < 2^32 (checked).
    void run(int64_t n_tasks, task_fn fn, void * ctx);

    // Runs fn(ctx, i) for i in [0, n_chunks), thread t first taking the chunks of its share [n_chunks * t /
    // n_threads, n_chunks * (t + 1) / n_threads) in order (NOTE(thread-pool-shares)). The caller is thread 0.
    // Same contract as run().
    void run_shares(int64_t n_chunks, task_fn fn, void * ctx);

    // Convenience wrappers: f(i) for i in [0, n); f is called by reference, nothing is allocated.
    template <typename F>
    void parallel_for(int64_t n_tasks, F && f) {
        run(n_tasks, call<F>, const_cast<void *>(static_cast<const void *>(&f)));
    }
    template <typename F>
    void parallel_for_shares(int64_t n_chunks, F && f) {
        run_shares(n_chunks, call<F>, const_cast<void *>(static_cast<const void *>(&f)));
    }

private:
    // The task_fn of the wrappers: calls the callable that ctx points to.
    template <typename F>
    static void call(void * ctx, int64_t i) { (*static_cast<typename std::remove_reference<F>::type *>(ctx))(i); }

    // One thread's share of a run_shares job: (back << 32) | front, the chunks [front, back) not yet claimed.
    struct alignas(64) share {
        std::atomic<uint64_t> range{0};
    };

    void worker_main(int index);
    // Claims and runs tasks of the current job until its ticket is exhausted, then chunks of the shares:
    // thread `self`'s own from the front, then the others' from the back, until every share is empty.
    void work_on_current_job(int self);
    // Claims and runs the tasks left in one (back << 32) | front word — the ticket or a share — from its front
    // or its back, until it is empty.
    void drain(std::atomic<uint64_t> & range, bool from_front);
    // run (shares false) and run_shares: publishes the job, works on it, and returns when its tasks are done.
    void run_job(int64_t n_tasks, task_fn fn, void * ctx, bool shares);

    int n_threads_;
    std::vector<std::thread> workers_;     // (n_threads - 1)
    std::mutex mutex_;
    std::condition_variable wake_;
    std::atomic<uint64_t> generation_{0};  // bumped once per job, to wake waiting workers
    std::atomic<bool> stop_{false};
    std::atomic<uint64_t> ticket_{0};      // (n_tasks << 32) | next unclaimed task of the current job: a share all take from the front
    std::atomic<int64_t> done_{0};         // tasks of the current job finished
    std::atomic<int> n_sleeping_{0};
    std::unique_ptr<share[]> shares_;      // (n_threads) run_shares' shares, thread t's at t
    task_fn fn_ = nullptr;
    void * ctx_ = nullptr;
};

} // namespace tmill
