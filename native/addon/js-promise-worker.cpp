#include "addon/js-promise-worker.h"

namespace tmill::addon {

promise_worker::promise_worker(Napi::Env env) : Napi::AsyncWorker(env), deferred_(Napi::Promise::Deferred::New(env)) {}

Napi::Promise promise_worker::start() {
    Napi::Promise promise = deferred_.Promise();
    Queue();
    return promise;
}

void promise_worker::on_failure(Napi::Env, Napi::Error &) {}

void promise_worker::Execute() {
    ok_ = capture_error([this] { work(); }, failure_);
}

void promise_worker::OnOK() {
    Napi::Env env = Env();
    if (!ok_) {
        Napi::Error err = make_error(env, failure_.code, failure_.message);
        on_failure(env, err);
        deferred_.Reject(err.Value());
        return;
    }
    Napi::Value value = guard(env, [&]() -> Napi::Value { return result(env); });
    if (env.IsExceptionPending()) {
        deferred_.Reject(env.GetAndClearPendingException().Value());
    } else {
        deferred_.Resolve(value);
    }
}

} // namespace tmill::addon
