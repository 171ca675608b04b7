#include "sched/request-queue.h"

#include <algorithm>
#include <deque>
#include <vector>

#include "base/error.h"

namespace tmill::sched {

namespace {

class fcfs_queue final : public request_queue {
public:
    void push(request * r) override { q_.push_back(r); }
    void push_preempted(request * r) override { q_.push_front(r); }
    void remove(const request * r) override {
        auto it = std::find(q_.begin(), q_.end(), r);
        TM_CHECK(it != q_.end(), internal, "request_queue: removing a request that is not queued");
        q_.erase(it);
    }
    size_t size() const override { return q_.size(); }
    request * at(size_t i) const override { return q_[i]; }

private:
    std::deque<request *> q_;
};

// A sorted vector: admission walks it in order and removal happens anywhere (admit, abort).
class priority_queue final : public request_queue {
public:
    void push(request * r) override {
        auto it = std::upper_bound(q_.begin(), q_.end(), r,
                                   [](const request * a, const request * b) { return priority_before(*a, *b); });
        q_.insert(it, r);
    }
    void push_preempted(request * r) override { push(r); }
    void remove(const request * r) override {
        auto it = std::find(q_.begin(), q_.end(), r);
        TM_CHECK(it != q_.end(), internal, "request_queue: removing a request that is not queued");
        q_.erase(it);
    }
    size_t size() const override { return q_.size(); }
    request * at(size_t i) const override { return q_[i]; }

private:
    std::vector<request *> q_;
};

} // namespace

std::unique_ptr<request_queue> make_request_queue(sched_policy policy) {
    if (policy == sched_policy::priority) return std::make_unique<priority_queue>();
    return std::make_unique<fcfs_queue>();
}

} // namespace tmill::sched
