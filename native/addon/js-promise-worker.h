// promise_worker: the one way an AsyncWorker settles its promise. The work runs on a libuv thread with
// its C++ errors captured (capture_error); back on the JS thread a failure rejects with a JS Error
// carrying `.code` (make_error), and success resolves with the JS value the worker builds — built under
// guard(), so a failure there (an allocation, a constructor) rejects too. No C++ exception crosses N-API
// and no worker writes its own Resolve/Reject.
#pragma once

#include <napi.h>

#include "addon/js-errors.h"

namespace tmill::addon {

class promise_worker : public Napi::AsyncWorker {
public:
    // Queues the worker (libuv deletes it once settled) and returns its promise.
    Napi::Promise start();

protected:
    explicit promise_worker(Napi::Env env);

    // Worker thread: the work; throws (tmill::error, std::exception, …) on failure.
    virtual void work() = 0;
    // JS thread, after work() returned: the value the promise resolves with.
    virtual Napi::Value result(Napi::Env env) = 0;
    // JS thread, after work() threw: extra fields on the error (a position, …) or cleanup of what the
    // worker holds; the promise rejects with `err` afterwards.
    virtual void on_failure(Napi::Env env, Napi::Error & err);

private:
    void Execute() final;
    void OnOK() final;

    Napi::Promise::Deferred deferred_;
    captured_error failure_;
    bool ok_ = false;
};

} // namespace tmill::addon
