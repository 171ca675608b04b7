// The one place where C++ exceptions become JS errors. Every exported function runs its body through
// guard(); every AsyncWorker is a promise_worker (js-promise-worker.h), whose Execute() uses
// capture_error(). No C++ exception ever crosses N-API.
#pragma once

#include <napi.h>

#include <functional>
#include <string>

namespace tmill::addon {

// A failure carried from a worker thread to the JS thread.
struct captured_error {
    std::string code;     // stable code string (tmill::error_code_name), e.g. "gguf_invalid"
    std::string message;
};

// Builds a JS Error with `.code`.
Napi::Error make_error(Napi::Env env, const std::string & code, const std::string & message);

// Runs fn; converts tmill::error / std::exception / anything into a thrown JS Error with `.code` and
// returns undefined in that case.
Napi::Value guard(Napi::Env env, const std::function<Napi::Value()> & fn);

// Runs fn on a worker thread; returns true on success, or fills `out` and returns false.
bool capture_error(const std::function<void()> & fn, captured_error & out);

// Argument checks that throw tmill::error(invalid_argument) with "Expected … for … but received …".
std::string require_string(const Napi::Value & v, const char * name);
Napi::Object require_object(const Napi::Value & v, const char * name);
bool optional_bool(const Napi::Object & o, const char * key, bool fallback);
// A finite number (fallback when undefined or null).
double optional_number(const Napi::Object & o, const char * key, double fallback);

} // namespace tmill::addon
