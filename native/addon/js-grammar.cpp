#include "addon/js-grammar.h"

#include "addon/addon-state.h"
#include "addon/js-errors.h"
#include "addon/js-model.h"
#include "base/error.h"

namespace tmill::addon {

namespace {

// NOTE(addon/grammar): compiling runs on a libuv worker because the first grammar of a vocabulary builds
// its byte trie (milliseconds for 32k tokens, more for 150k) and big schemas take time to parse; the JS
// thread (an HTTP server's event loop) must not wait for either. The result is immutable, so one
// NativeGrammar may be shared by any number of requests and cached by the caller.
class compile_worker : public Napi::AsyncWorker {
public:
    compile_worker(Napi::Env env, std::shared_ptr<const tok::vocab> v, std::string text)
        : Napi::AsyncWorker(env), deferred_(Napi::Promise::Deferred::New(env)), vocab_(std::move(v)),
          text_(std::move(text)) {}

    Napi::Promise promise() { return deferred_.Promise(); }

    void Execute() override {
        // grammar_error carries the position; catch it first, everything else through capture_error.
        ok_ = capture_error([&] {
            try {
                grammar_ = grammar::compile_grammar(text_, vocab_);
            } catch (const grammar::grammar_error & e) {
                line_ = e.line();
                column_ = e.column();
                throw;
            }
        }, failure_);
    }

    void OnOK() override {
        Napi::Env env = Env();
        if (!ok_) {
            Napi::Error err = make_error(env, failure_.code, failure_.message);
            if (line_ > 0) {
                err.Set("line", Napi::Number::New(env, line_));
                err.Set("column", Napi::Number::New(env, column_));
            }
            deferred_.Reject(err.Value());
            return;
        }
        Napi::Value result = guard(env, [&]() -> Napi::Value {
            Napi::Object obj = addon_state::of(env).grammar_ctor.New({});
            js_grammar::Unwrap(obj)->set(std::move(grammar_));
            return obj;
        });
        if (env.IsExceptionPending()) {
            deferred_.Reject(env.GetAndClearPendingException().Value());
        } else {
            deferred_.Resolve(result);
        }
    }

private:
    Napi::Promise::Deferred deferred_;
    std::shared_ptr<const tok::vocab> vocab_;
    std::string text_;
    std::shared_ptr<const grammar::compiled_grammar> grammar_;
    captured_error failure_;
    int32_t line_ = 0;       // 1-based position of a grammar_error; 0 for other failures
    int32_t column_ = 0;
    bool ok_ = false;
};

} // namespace

Napi::Function js_grammar::define(Napi::Env env) {
    return DefineClass(env, "NativeGrammar", {
        InstanceMethod<&js_grammar::info>("info"),
    });
}

js_grammar::js_grammar(const Napi::CallbackInfo & info) : Napi::ObjectWrap<js_grammar>(info) {}

Napi::Value js_grammar::compile(const Napi::CallbackInfo & info) {
    Napi::Env env = info.Env();
    return guard(env, [&]() -> Napi::Value {
        Napi::Object model_object = require_object(info[0], "model");
        TM_CHECK(model_object.InstanceOf(addon_state::of(env).model_ctor.Value()), invalid_argument,
                 "Expected a NativeModel for model");
        std::string text = require_string(info[1], "grammar");
        std::shared_ptr<const model> m = js_model::Unwrap(model_object)->get();
        auto * worker = new compile_worker(env, m->vocab, std::move(text));
        Napi::Promise promise = worker->promise();
        worker->Queue();
        return promise;
    });
}

Napi::Value js_grammar::info(const Napi::CallbackInfo & info) {
    Napi::Env env = info.Env();
    return guard(env, [&]() -> Napi::Value {
        TM_CHECK(grammar_ != nullptr, invalid_argument, "NativeGrammar objects come from compileGrammar()");
        Napi::Object o = Napi::Object::New(env);
        o.Set("rules", Napi::Number::New(env, double(grammar_->g.rules.size())));
        o.Set("elements", Napi::Number::New(env, double(grammar_->g.elements.size())));
        return o;
    });
}

std::shared_ptr<const grammar::compiled_grammar> grammar_from_js(Napi::Env env, const Napi::Value & v,
                                                                 const Napi::Value & model_object) {
    TM_CHECK(v.IsObject() && v.As<Napi::Object>().InstanceOf(addon_state::of(env).grammar_ctor.Value()), invalid_argument,
             "Expected a NativeGrammar (from compileGrammar) for grammar");
    std::shared_ptr<const grammar::compiled_grammar> g = js_grammar::Unwrap(v.As<Napi::Object>())->get();
    TM_CHECK(g != nullptr, invalid_argument, "NativeGrammar objects come from compileGrammar()");
    TM_CHECK(model_object.IsObject() && model_object.As<Napi::Object>().InstanceOf(addon_state::of(env).model_ctor.Value()),
             invalid_argument, "Expected a NativeModel for the engine's model");
    const std::shared_ptr<const model> m = js_model::Unwrap(model_object.As<Napi::Object>())->get();
    TM_CHECK(m->vocab == g->vocab, invalid_argument, "the grammar was compiled for a different model");
    return g;
}

} // namespace tmill::addon
