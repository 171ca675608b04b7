// JS request objects → engine structs, on the JS thread, once per request (sharp's "baton" step).
// TypeScript validates first; these checks are the cheap second line so a direct addon user cannot
// crash the process (they throw tmill::error invalid_argument, which guard() turns into a JS Error).
#pragma once

#include <napi.h>

#include "engine/engine.h"

namespace tmill::addon {

engine_params engine_params_from_js(const Napi::Object & o);
engine_request engine_request_from_js(const Napi::Object & o);

} // namespace tmill::addon
