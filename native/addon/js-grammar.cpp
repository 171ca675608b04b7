#include "addon/js-grammar.h"

#include "addon/addon-state.h"
#include "addon/js-errors.h"
#include "addon/js-model.h"
#include "base/error.h"

namespace tmill::addon {

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
        const std::string text = require_string(info[1], "grammar");
        std::shared_ptr<const model> m = js_model::Unwrap(model_object)->get();
        std::shared_ptr<const grammar::compiled_grammar> g;
        try {
            g = grammar::compile_grammar(text, m->vocab);
        } catch (const grammar::grammar_error & e) {
            Napi::Error err = make_error(env, e.code_name(), e.what());
            err.Set("line", Napi::Number::New(env, e.line()));
            err.Set("column", Napi::Number::New(env, e.column()));
            throw err;
        }
        Napi::Object obj = addon_state::of(env).grammar_ctor.New({});
        js_grammar::Unwrap(obj)->grammar_ = std::move(g);
        return obj;
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
