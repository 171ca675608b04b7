// measureReadBandwidth(bytes, threads, reps) → Promise<number>: the machine's read bandwidth in bytes/s
// (tmill::measure_read_bandwidth), measured on a libuv worker so the caller's event loop keeps running.
// For benchmarks: it allocates `bytes` and keeps `threads` cores busy for a second or two. The model
// variant reads the model's weights instead of a fresh buffer.
#pragma once

#include <napi.h>

#include <memory>

#include "model/model.h"

namespace tmill::addon {

Napi::Value measure_read_bandwidth(const Napi::CallbackInfo & info);

// model.measureWeightReadBandwidth(threads, reps) → Promise<{ bytesPerSecond, bytes }>: the same passes over
// the model's own decode read set (tmill::decode_read_set), whose `bytes` a decode step reads.
Napi::Value measure_weight_read_bandwidth(const Napi::CallbackInfo & info, std::shared_ptr<const model> m);

} // namespace tmill::addon
