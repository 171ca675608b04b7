// measureReadBandwidth(bytes, threads, reps) → Promise<number>: the machine's read bandwidth in bytes/s
// (tmill::measure_read_bandwidth), measured on a libuv worker so the caller's event loop keeps running.
// For benchmarks: it allocates `bytes` and keeps `threads` cores busy for a second or two.
#pragma once

#include <napi.h>

namespace tmill::addon {

Napi::Value measure_read_bandwidth(const Napi::CallbackInfo & info);

} // namespace tmill::addon
