#include "addon/js-metadata.h"

namespace tmill::addon {

namespace {

constexpr double k_max_safe_integer = 9007199254740991.0;

Napi::Value value_to_js(Napi::Env env, const gguf::value & v) {
    using gguf::value_type;
    switch (v.type) {
        case value_type::u8: case value_type::u16: case value_type::u32: case value_type::u64:
            if (double(v.u) <= k_max_safe_integer) return Napi::Number::New(env, double(v.u));
            return Napi::BigInt::New(env, uint64_t(v.u));
        case value_type::i8: case value_type::i16: case value_type::i32: case value_type::i64:
            if (double(v.i) <= k_max_safe_integer && double(v.i) >= -k_max_safe_integer) return Napi::Number::New(env, double(v.i));
            return Napi::BigInt::New(env, int64_t(v.i));
        case value_type::f32: case value_type::f64:
            return Napi::Number::New(env, v.f);
        case value_type::boolean:
            return Napi::Boolean::New(env, v.u != 0);
        case value_type::string:
            return Napi::String::New(env, v.str.data(), v.str.size());
        case value_type::array: {
            if (v.elems.size() > k_max_inline_array) {
                Napi::Object summary = Napi::Object::New(env);
                summary.Set("arrayType", gguf::value_type_name(v.elem_type));
                summary.Set("length", Napi::Number::New(env, double(v.elems.size())));
                return summary;
            }
            Napi::Array a = Napi::Array::New(env, v.elems.size());
            for (size_t i = 0; i < v.elems.size(); ++i) a.Set(uint32_t(i), value_to_js(env, v.elems[i]));
            return a;
        }
    }
    return env.Null();
}

} // namespace

Napi::Object metadata_to_js(Napi::Env env, const gguf::file & file) {
    Napi::Object o = Napi::Object::New(env);
    for (const gguf::kv & entry : file.metadata()) {
        o.Set(Napi::String::New(env, entry.key.data(), entry.key.size()), value_to_js(env, entry.val));
    }
    return o;
}

} // namespace tmill::addon
