#include "addon/js-errors.h"

#include "base/error.h"

#include <cmath>
#include <new>
#include <string>

namespace tmill::addon {

Napi::Error make_error(Napi::Env env, const std::string & code, const std::string & message) {
    Napi::Error err = Napi::Error::New(env, message);
    err.Set("code", Napi::String::New(env, code));
    return err;
}

Napi::Value guard(Napi::Env env, const std::function<Napi::Value()> & fn) {
    captured_error failure;
    try {
        return fn();
    } catch (const Napi::Error & e) {
        e.ThrowAsJavaScriptException();
        return env.Undefined();
    } catch (const tmill::error & e) {
        failure = {e.code_name(), e.what()};
    } catch (const std::bad_alloc &) {
        failure = {"out_of_memory", "out of memory"};
    } catch (const std::exception & e) {
        failure = {"internal", e.what()};
    } catch (...) {
        failure = {"internal", "unknown native error"};
    }
    make_error(env, failure.code, failure.message).ThrowAsJavaScriptException();
    return env.Undefined();
}

bool capture_error(const std::function<void()> & fn, captured_error & out) {
    try {
        fn();
        return true;
    } catch (const tmill::error & e) {
        out = {e.code_name(), e.what()};
    } catch (const std::bad_alloc &) {
        out = {"out_of_memory", "out of memory"};
    } catch (const std::exception & e) {
        out = {"internal", e.what()};
    } catch (...) {
        out = {"internal", "unknown native error"};
    }
    return false;
}

static std::string type_of(const Napi::Value & v) {
    if (v.IsUndefined()) return "undefined";
    if (v.IsNull()) return "null";
    if (v.IsString()) return "string";
    if (v.IsNumber()) return "number";
    if (v.IsBoolean()) return "boolean";
    if (v.IsArray()) return "array";
    if (v.IsTypedArray()) return "typed array";
    if (v.IsFunction()) return "function";
    return "object";
}

std::string require_string(const Napi::Value & v, const char * name) {
    TM_CHECK(v.IsString(), invalid_argument,
             std::string("Expected a string for ") + name + " but received " + type_of(v));
    return v.As<Napi::String>().Utf8Value();
}

Napi::Object require_object(const Napi::Value & v, const char * name) {
    TM_CHECK(v.IsObject() && !v.IsArray(), invalid_argument,
             std::string("Expected an object for ") + name + " but received " + type_of(v));
    return v.As<Napi::Object>();
}

bool optional_bool(const Napi::Object & o, const char * key, bool fallback) {
    Napi::Value v = o.Get(key);
    if (v.IsUndefined()) return fallback;
    TM_CHECK(v.IsBoolean(), invalid_argument,
             std::string("Expected a boolean for ") + key + " but received " + type_of(v));
    return v.As<Napi::Boolean>().Value();
}

double optional_number(const Napi::Object & o, const char * key, double fallback) {
    Napi::Value v = o.Get(key);
    if (v.IsUndefined() || v.IsNull()) return fallback;
    TM_CHECK(v.IsNumber(), invalid_argument, std::string("Expected a number for ") + key);
    const double d = v.As<Napi::Number>().DoubleValue();
    TM_CHECK(std::isfinite(d), invalid_argument, std::string("Expected a finite number for ") + key);
    return d;
}

} // namespace tmill::addon
