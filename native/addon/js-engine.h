// NativeEngine: the JS wrapper of a tmill::engine, and createEngine(), its AsyncWorker factory.
// notify is a payload-free ThreadSafeFunction: the engine thread calls it when its outbox goes from
// empty to non-empty; JS then calls drain(). The TSFN is ref'd only while requests are in flight, so an
// idle engine does not keep the process alive.
#pragma once

#include <napi.h>

#include <memory>

#include "engine/engine.h"

namespace tmill::addon {

class js_engine : public Napi::ObjectWrap<js_engine> {
public:
    static Napi::Function define(Napi::Env env);
    static Napi::Value create(const Napi::CallbackInfo & info);   // createEngine(model, opts, notify) → Promise

    explicit js_engine(const Napi::CallbackInfo & info);
    ~js_engine() override;

    void adopt(std::unique_ptr<engine> e, Napi::ThreadSafeFunction notify, Napi::Env env);

private:
    Napi::Value submit(const Napi::CallbackInfo & info);
    Napi::Value abort(const Napi::CallbackInfo & info);
    Napi::Value drain(const Napi::CallbackInfo & info);
    Napi::Value stats(const Napi::CallbackInfo & info);
    Napi::Value close(const Napi::CallbackInfo & info);
    Napi::Value info(const Napi::CallbackInfo & info);

    engine & live();
    void release_notify(Napi::Env env);
    static void cleanup_hook(void * self);

    std::unique_ptr<engine> engine_;
    Napi::ThreadSafeFunction notify_;
    bool notify_live_ = false;
    bool notify_refd_ = false;
    int64_t n_in_flight_ = 0;
    bool closing_ = false;
    napi_env env_ = nullptr;
};

} // namespace tmill::addon
