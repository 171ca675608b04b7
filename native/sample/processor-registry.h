// Custom logits processors: a library user registers a named factory once (before engines start);
// every request then asks every factory, passing the request's vllm_xargs, and a factory returns
// nullptr when its processor does not apply. This is vLLM's --logits-processors model, in C++.
#pragma once

#include "sample/logits-processor.h"
#include "sample/xargs.h"

#include <functional>
#include <string>
#include <vector>

namespace tmill {

// May throw tmill::error invalid_argument to reject the request's xargs at admission.
using processor_factory = std::function<processor_ptr(const xargs_map & xargs, const request_shape & shape)>;

// pre: name non-empty and not yet registered.
void register_logits_processor(const std::string & name, processor_factory factory);
bool unregister_logits_processor(const std::string & name);
std::vector<std::string> registered_logits_processors();

// One instance per registered factory that applies to this request (registration order).
std::vector<processor_ptr> make_custom_processors(const xargs_map & xargs, const request_shape & shape);

} // namespace tmill
