// NativeGrammar: the JS wrapper of a grammar compiled for one model's vocabulary, and
// compileGrammar(model, text), its factory (a Promise; compiled on a libuv worker). Requests pass it as
// `grammar` to engine.submit().
#pragma once

#include <napi.h>

#include <memory>

#include "grammar/matcher.h"

namespace tmill::addon {

class js_grammar : public Napi::ObjectWrap<js_grammar> {
public:
    static Napi::Function define(Napi::Env env);
    // compileGrammar(model: NativeModel, text: string) → Promise<NativeGrammar>. Rejects with an Error
    // with code 'grammar_invalid', `line` and `column` (1-based) for bad grammar text; bad arguments
    // throw synchronously (code 'invalid_argument').
    static Napi::Value compile(const Napi::CallbackInfo & info);

    explicit js_grammar(const Napi::CallbackInfo & info);

    std::shared_ptr<const grammar::compiled_grammar> get() const { return grammar_; }
    // Binds a fresh NativeGrammar to its compiled grammar (once, by compileGrammar's worker).
    void set(std::shared_ptr<const grammar::compiled_grammar> g) { grammar_ = std::move(g); }

private:
    Napi::Value info(const Napi::CallbackInfo & info);

    std::shared_ptr<const grammar::compiled_grammar> grammar_;
};

// The compiled grammar of a NativeGrammar object, checked against `model_object` (a NativeModel: the
// engine's model; the grammar must have been compiled for the same vocabulary); tmill::error
// invalid_argument otherwise.
std::shared_ptr<const grammar::compiled_grammar> grammar_from_js(Napi::Env env, const Napi::Value & v,
                                                                 const Napi::Value & model_object);

} // namespace tmill::addon
