#include "addon/js-engine.h"

#include <functional>
#include <string>
#include <vector>

#include "addon/addon-state.h"
#include "addon/js-convert.h"
#include "addon/js-errors.h"
#include "addon/js-grammar.h"
#include "addon/js-model.h"
#include "addon/js-promise-worker.h"
#include "base/error.h"

namespace tmill::addon {

namespace {

// Allocates the KV pool and starts the engine thread off the JS thread.
class create_worker : public promise_worker {
public:
    create_worker(Napi::Env env, std::shared_ptr<const model> m, engine_params params, Napi::ThreadSafeFunction notify,
                  Napi::Object model_object)
        : promise_worker(env), model_(std::move(m)), params_(params), notify_(notify),
          model_ref_(Napi::Persistent(model_object)) {}

private:
    void work() override {
        Napi::ThreadSafeFunction tsfn = notify_;
        engine_ = std::make_unique<engine>(model_, params_, [tsfn]() mutable { tsfn.NonBlockingCall(); });
    }
    Napi::Value result(Napi::Env env) override {
        Napi::Object obj;
        try {
            obj = addon_state::of(env).engine_ctor.New({});
        } catch (...) {
            // no js_engine adopted the notify function: release it, or it keeps the event loop alive
            notify_.Release();
            throw;
        }
        obj.Set("model", model_ref_.Value());   // keeps the model object alive as long as the engine
        js_engine::Unwrap(obj)->adopt(std::move(engine_), notify_, env);
        return obj;
    }
    void on_failure(Napi::Env, Napi::Error &) override { notify_.Release(); }

    std::shared_ptr<const model> model_;
    engine_params params_;
    Napi::ThreadSafeFunction notify_;
    Napi::ObjectReference model_ref_;
    std::unique_ptr<engine> engine_;
};

// Stops the engine thread and frees the engine (KV pool included) off the JS thread, keeping the
// records it emitted while stopping (an abort for every live request); they resolve the promise.
class close_worker : public promise_worker {
public:
    close_worker(Napi::Env env, std::unique_ptr<engine> e, std::function<void(Napi::Env)> on_done)
        : promise_worker(env), engine_(std::move(e)), on_done_(std::move(on_done)) {}

private:
    void work() override {
        if (!engine_) return;
        engine_->close();
        records_ = engine_->drain();
        engine_.reset();
    }
    Napi::Value result(Napi::Env env) override;
    void on_failure(Napi::Env env, Napi::Error &) override { on_done_(env); }

    std::unique_ptr<engine> engine_;
    std::function<void(Napi::Env)> on_done_;
    std::vector<engine_record> records_;
};

// Flattened (token, logprob, rank) entries, n_top + 1 per position, as typed arrays.
Napi::Object logprobs_to_js(Napi::Env env, const std::vector<logprob_entry> & entries, int32_t n_top) {
    const size_t n = entries.size();
    Napi::Int32Array ids = Napi::Int32Array::New(env, n);
    Napi::Float32Array values = Napi::Float32Array::New(env, n);
    Napi::Int32Array ranks = Napi::Int32Array::New(env, n);
    for (size_t i = 0; i < n; ++i) {
        ids[i] = entries[i].token;
        values[i] = entries[i].logprob;
        ranks[i] = entries[i].rank;
    }
    Napi::Object lp = Napi::Object::New(env);
    lp.Set("ids", ids);
    lp.Set("logprobs", values);
    lp.Set("ranks", ranks);
    lp.Set("nTop", n_top);
    return lp;
}

Napi::Object record_to_js(Napi::Env env, engine_record & rec) {
    Napi::Object o = Napi::Object::New(env);
    o.Set("id", Napi::Number::New(env, double(rec.id)));
    o.Set("seq", rec.seq);
    if (rec.done) o.Set("done", true);
    Napi::Int32Array tokens = Napi::Int32Array::New(env, rec.tokens.size());
    std::copy(rec.tokens.begin(), rec.tokens.end(), tokens.Data());
    o.Set("tokens", tokens);
    o.Set("text", Napi::String::New(env, rec.text));
    if (!rec.logprobs.empty()) o.Set("logprobs", logprobs_to_js(env, rec.logprobs, rec.n_top_logprobs));
    if (rec.n_top_prompt_logprobs >= 0) {
        o.Set("promptLogprobs", logprobs_to_js(env, rec.prompt_logprobs, rec.n_top_prompt_logprobs));
    }
    if (rec.finish != engine_finish::none) {
        o.Set("finish", engine_finish_name(rec.finish));
        if (!rec.stop_string.empty()) o.Set("stopReason", rec.stop_string);
        else if (rec.stop_token >= 0) o.Set("stopReason", rec.stop_token);
        if (rec.finish == engine_finish::error) {
            Napi::Object err = Napi::Object::New(env);
            err.Set("code", rec.error_code);
            err.Set("message", rec.error_message);
            o.Set("error", err);
        }
        Napi::Object usage = Napi::Object::New(env);
        usage.Set("promptTokens", rec.n_prompt_tokens);
        usage.Set("completionTokens", rec.n_completion_tokens);
        usage.Set("cachedTokens", rec.n_cached_tokens);
        o.Set("usage", usage);
        if (rec.cum_logprob) o.Set("cumLogprob", *rec.cum_logprob);
    }
    return o;
}

Napi::Value close_worker::result(Napi::Env env) {
    on_done_(env);
    Napi::Array out = Napi::Array::New(env, records_.size());
    for (size_t i = 0; i < records_.size(); ++i) out.Set(uint32_t(i), record_to_js(env, records_[i]));
    return out;
}

} // namespace

Napi::Function js_engine::define(Napi::Env env) {
    return DefineClass(env, "NativeEngine", {
        InstanceMethod<&js_engine::submit>("submit"),
        InstanceMethod<&js_engine::abort>("abort"),
        InstanceMethod<&js_engine::drain>("drain"),
        InstanceMethod<&js_engine::stats>("stats"),
        InstanceMethod<&js_engine::close>("close"),
        InstanceMethod<&js_engine::info>("info"),
    });
}

js_engine::js_engine(const Napi::CallbackInfo & info) : Napi::ObjectWrap<js_engine>(info) {}

js_engine::~js_engine() {
    // Garbage-collected without close(): stop the thread here (the env is still alive during GC).
    if (engine_) engine_->close();
    if (env_) napi_remove_env_cleanup_hook(env_, cleanup_hook, this);
}

void js_engine::cleanup_hook(void * self) {
    auto * e = static_cast<js_engine *>(self);
    if (e->engine_) e->engine_->close();
    e->engine_.reset();
    e->env_ = nullptr;
}

void js_engine::adopt(std::unique_ptr<engine> e, Napi::ThreadSafeFunction notify, Napi::Env env) {
    engine_ = std::move(e);
    notify_ = notify;
    notify_live_ = true;
    notify_.Unref(env);
    env_ = env;
    napi_add_env_cleanup_hook(env, cleanup_hook, this);
}

engine & js_engine::live() {
    TM_CHECK(engine_ != nullptr && !closing_, disposed, "engine is closed");
    return *engine_;
}

void js_engine::release_notify(Napi::Env env) {
    if (!notify_live_) return;
    notify_live_ = false;
    notify_.Release();
}

Napi::Value js_engine::create(const Napi::CallbackInfo & info) {
    Napi::Env env = info.Env();
    return guard(env, [&]() -> Napi::Value {
        Napi::Object model_object = require_object(info[0], "model");
        TM_CHECK(model_object.InstanceOf(addon_state::of(env).model_ctor.Value()), invalid_argument,
                 "Expected a NativeModel for model");
        std::shared_ptr<const model> m = js_model::Unwrap(model_object)->get();
        const engine_params params = engine_params_from_js(require_object(info[1], "options"));
        TM_CHECK(info[2].IsFunction(), invalid_argument, "Expected a function for notify");
        Napi::ThreadSafeFunction tsfn = Napi::ThreadSafeFunction::New(env, info[2].As<Napi::Function>(), "tokenmill-notify", 0, 1);
        return (new create_worker(env, std::move(m), params, tsfn, model_object))->start();
    });
}

Napi::Value js_engine::submit(const Napi::CallbackInfo & info) {
    Napi::Env env = info.Env();
    return guard(env, [&]() -> Napi::Value {
        engine & e = live();
        engine_request request = engine_request_from_js(require_object(info[0], "request"));
        const Napi::Value grammar = info[0].As<Napi::Object>().Get("grammar");
        if (!grammar.IsUndefined() && !grammar.IsNull()) {
            request.sampling.grammar = grammar_from_js(env, grammar, info.This().As<Napi::Object>().Get("model"));
        }
        TM_CHECK(request.sampling.grammar || request.sampling.grammar_after.empty(), invalid_argument,
                 "grammarAfter needs a grammar");
        e.submit(std::move(request));
        if (n_in_flight_++ == 0 && !notify_refd_) {
            notify_.Ref(env);
            notify_refd_ = true;
        }
        return env.Undefined();
    });
}

Napi::Value js_engine::abort(const Napi::CallbackInfo & info) {
    Napi::Env env = info.Env();
    return guard(env, [&]() -> Napi::Value {
        TM_CHECK(info[0].IsNumber(), invalid_argument, "Expected a number for id");
        live().abort(uint64_t(info[0].As<Napi::Number>().Int64Value()));
        return env.Undefined();
    });
}

Napi::Value js_engine::drain(const Napi::CallbackInfo & info) {
    Napi::Env env = info.Env();
    return guard(env, [&]() -> Napi::Value {
        if (!engine_) return Napi::Array::New(env, 0);
        std::vector<engine_record> records = engine_->drain();
        Napi::Array out = Napi::Array::New(env, records.size());
        for (size_t i = 0; i < records.size(); ++i) {
            if (records[i].done) --n_in_flight_;
            out.Set(uint32_t(i), record_to_js(env, records[i]));
        }
        if (n_in_flight_ <= 0 && notify_refd_ && notify_live_) {
            n_in_flight_ = 0;
            notify_.Unref(env);
            notify_refd_ = false;
        }
        return out;
    });
}

Napi::Value js_engine::stats(const Napi::CallbackInfo & info) {
    Napi::Env env = info.Env();
    return guard(env, [&]() -> Napi::Value {
        const engine_stats s = live().stats();
        Napi::Object o = Napi::Object::New(env);
        o.Set("running", s.running);
        o.Set("waiting", s.waiting);
        o.Set("kvCacheUsage", s.kv_usage);
        o.Set("kvBlocksTotal", s.kv_blocks_total);
        o.Set("kvBlocksFree", s.kv_blocks_free);
        o.Set("prefixCacheQueries", double(s.prefix_cache_queries));
        o.Set("prefixCacheHits", double(s.prefix_cache_hits));
        o.Set("preemptions", double(s.preemptions));
        o.Set("promptTokens", double(s.prompt_tokens));
        o.Set("generationTokens", double(s.generation_tokens));
        o.Set("tokensComputed", double(s.tokens_computed));
        o.Set("steps", double(s.steps));
        return o;
    });
}

Napi::Value js_engine::info(const Napi::CallbackInfo & info) {
    Napi::Env env = info.Env();
    return guard(env, [&]() -> Napi::Value {
        engine & e = live();
        Napi::Object o = Napi::Object::New(env);
        o.Set("maxModelLen", e.max_model_len());
        o.Set("kvBlocksTotal", e.kv_blocks_total());
        o.Set("blockSize", 16);
        return o;
    });
}

Napi::Value js_engine::close(const Napi::CallbackInfo & info) {
    Napi::Env env = info.Env();
    return guard(env, [&]() -> Napi::Value {
        if (closing_) {
            Napi::Promise::Deferred done = Napi::Promise::Deferred::New(env);
            done.Resolve(Napi::Array::New(env, 0));
            return done.Promise();
        }
        closing_ = true;
        if (env_) {
            napi_remove_env_cleanup_hook(env_, cleanup_hook, this);
            env_ = nullptr;
        }
        // Stop now (engine::request_close); the worker only waits for the thread. The notify TSFN is
        // released only after the engine thread has stopped calling it.
        if (engine_) engine_->request_close();
        Ref();
        auto * worker = new close_worker(env, std::move(engine_), [this](Napi::Env e) {
            release_notify(e);
            Unref();
        });
        return worker->start();
    });
}

} // namespace tmill::addon
