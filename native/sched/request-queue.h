// The waiting queue behind a tiny interface chosen by enum (fcfs | priority).
#pragma once

#include <cstddef>
#include <memory>

#include "sched/request.h"

namespace tmill::sched {

enum class sched_policy { fcfs, priority };

// NOTE(request-queue): at(0..size) lists waiting requests in the order they should be admitted.
// fcfs: arrival order, preempted requests go back to the front; priority: by (priority, arrival),
// preempted ones simply re-enter at their key.
class request_queue {
public:
    virtual ~request_queue() = default;
    virtual void push(request * r) = 0;         // a new request
    virtual void push_preempted(request * r) = 0;
    virtual void remove(const request * r) = 0; // pre: r is queued
    virtual size_t size() const = 0;
    virtual request * at(size_t i) const = 0;   // pre: i < size()
};

std::unique_ptr<request_queue> make_request_queue(sched_policy policy);

} // namespace tmill::sched
