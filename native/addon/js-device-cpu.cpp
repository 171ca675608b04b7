// The CPU variant's device exports: only its name; it has no device to probe.
#include "addon/js-device.h"

namespace tmill::addon::js_device {

void define(Napi::Env env, Napi::Object exports) { exports.Set("variant", Napi::String::New(env, "cpu")); }

} // namespace tmill::addon::js_device
