#include "addon/js-grammar.h"

#include "addon/addon-state.h"
#include "addon/js-errors.h"
#include "addon/js-model.h"
#include "addon/js-promise-worker.h"
#include "base/error.h"

namespace tmill::addon {

namespace {

// NOTE(addon/grammar): compiling runs on a libuv worker because the first grammar of a vocabulary builds
// its byte trie (milliseconds for 32k tokens, more for 150k) and big schemas take time to parse; the JS
// thread (an HTTP server's event loop) must not wait for either. The result is immutable, so one
// NativeGrammar may be shared by any number of requests and cached by the caller.
class compile_worker : public promise_worker {
public:
    compile_worker(Napi::Env env, std::shared_ptr<const tok::vocab> v, std::string text)
        : promise_worker(env), vocab_(std::move(v)), text_(std::move(text)) {}

private:
    void work() override {
        try {
            grammar_ = grammar::compile_grammar(text_, vocab_);
        } catch (const grammar::grammar_error & e) {
            // the position goes on the JS error (on_failure); the error itself settles as any other
            line_ = e.line();
            column_ = e.column();
            throw;
        }
    }
    Napi::Value result(Napi::Env env) override {
        Napi::Object obj = addon_state::of(env).grammar_ctor.New({});
        js_grammar::Unwrap(obj)->set(std::move(grammar_));
        return obj;
    }
    void on_failure(Napi::Env env, Napi::Error & err) override {
        if (line_ <= 0) return;
        err.Set("line", Napi::Number::New(env, line_));
        err.Set("column", Napi::Number::New(env, column_));
    }

    std::shared_ptr<const tok::vocab> vocab_;
    std::string text_;
    std::shared_ptr<const grammar::compiled_grammar> grammar_;
    int32_t line_ = 0;       // 1-based position of a grammar_error; 0 for other failures
    int32_t column_ = 0;
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
        return (new compile_worker(env, m->vocab, std::move(text)))->start();
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
