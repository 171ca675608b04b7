// The CUDA variant's device exports: `variant: 'cuda'`, `cudaArchitectures` (the device code compiled in)
// and `cudaProbe()`, which lib/native/device.ts calls before it chooses this variant and Engine.create
// calls for the GPU's free memory (lib/engine/memory-estimate.ts).
#include "addon/js-device.h"

#include "addon/js-errors.h"
#include "cuda/probe.h"

namespace tmill::addon::js_device {

namespace {

// cudaProbe() -> { runtimeVersion, driverVersion, devices: [{ index, name, computeCapability, totalBytes,
// freeBytes, usable }], error: string | null }. Never throws for a missing GPU or driver: that is its answer.
Napi::Value probe(const Napi::CallbackInfo & info) {
    Napi::Env env = info.Env();
    return guard(env, [&]() -> Napi::Value {
        const cuda::probe_result r = cuda::probe();
        Napi::Object out = Napi::Object::New(env);
        out.Set("runtimeVersion", Napi::Number::New(env, r.runtime_version));
        out.Set("driverVersion", Napi::Number::New(env, r.driver_version));
        Napi::Array devices = Napi::Array::New(env, r.devices.size());
        for (size_t i = 0; i < r.devices.size(); ++i) {
            const cuda::device_info & d = r.devices[i];
            Napi::Object o = Napi::Object::New(env);
            o.Set("index", Napi::Number::New(env, d.index));
            o.Set("name", Napi::String::New(env, d.name));
            o.Set("computeCapability", Napi::String::New(env, std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor)));
            o.Set("totalBytes", Napi::Number::New(env, double(d.total_bytes)));
            o.Set("freeBytes", Napi::Number::New(env, double(d.free_bytes)));
            o.Set("usable", Napi::Boolean::New(env, d.usable));
            devices.Set(uint32_t(i), o);
        }
        out.Set("devices", devices);
        out.Set("error", r.error.empty() ? env.Null() : Napi::String::New(env, r.error));
        return out;
    });
}

} // namespace

void define(Napi::Env env, Napi::Object exports) {
    exports.Set("variant", Napi::String::New(env, "cuda"));
    exports.Set("cudaArchitectures", Napi::String::New(env, cuda::compiled_architectures()));
    exports.Set("cudaProbe", Napi::Function::New(env, probe, "cudaProbe"));
}

} // namespace tmill::addon::js_device
