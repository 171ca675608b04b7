// Module registration: the only file that knows every exported name (docs/native-boundary.md#exports).
#include <napi.h>

#include "addon/addon-state.h"
#include "addon/js-bandwidth.h"
#include "addon/js-device.h"
#include "addon/js-engine.h"
#include "addon/js-grammar.h"
#include "addon/js-model.h"
#include "base/cpu-features.h"

#ifndef TOKENMILL_VERSION
#define TOKENMILL_VERSION "0.1.0"
#endif

namespace tmill::addon {

static Napi::Value cpu_isa(const Napi::CallbackInfo & info) {
    return Napi::String::New(info.Env(), cpu_isa_name());
}

Napi::Object init(Napi::Env env, Napi::Object exports) {
    auto * state = new addon_state();
    env.SetInstanceData<addon_state>(state);
    state->model_ctor = Napi::Persistent(js_model::define(env));
    state->engine_ctor = Napi::Persistent(js_engine::define(env));
    state->grammar_ctor = Napi::Persistent(js_grammar::define(env));
    exports.Set("loadModel", Napi::Function::New(env, js_model::load, "loadModel"));
    exports.Set("createEngine", Napi::Function::New(env, js_engine::create, "createEngine"));
    exports.Set("compileGrammar", Napi::Function::New(env, js_grammar::compile, "compileGrammar"));
    exports.Set("measureReadBandwidth", Napi::Function::New(env, measure_read_bandwidth, "measureReadBandwidth"));
    exports.Set("cpuIsa", Napi::Function::New(env, cpu_isa, "cpuIsa"));
    exports.Set("version", Napi::String::New(env, TOKENMILL_VERSION));
    js_device::define(env, exports);
    return exports;
}

} // namespace tmill::addon

static Napi::Object init_module(Napi::Env env, Napi::Object exports) { return tmill::addon::init(env, exports); }

NODE_API_MODULE(tokenmill, init_module)
