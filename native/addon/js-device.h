// What a variant of the addon adds to the exports about the device it runs on. Each build links exactly
// one definition: js-device-cpu.cpp (binding.gyp, the CPU variant) or js-device-cuda.cpp (CMakeLists.txt,
// the CUDA variant). lib/native/device.ts reads these exports to choose a variant (docs/cuda.md).
#pragma once

#include <napi.h>

namespace tmill::addon::js_device {

// Sets `variant` ('cpu' or 'cuda') and, in the CUDA variant, its device functions on `exports`.
void define(Napi::Env env, Napi::Object exports);

} // namespace tmill::addon::js_device
