// Per-environment addon state (constructors of the wrapped classes), stored as the env's instance data
// so worker threads and several Node environments (worker_threads) never share JS handles.
#pragma once

#include <napi.h>

namespace tmill::addon {

struct addon_state {
    Napi::FunctionReference model_ctor;
    Napi::FunctionReference engine_ctor;
    Napi::FunctionReference grammar_ctor;

    static addon_state & of(Napi::Env env) { return *env.GetInstanceData<addon_state>(); }
};

} // namespace tmill::addon
