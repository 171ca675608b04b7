// GGUF metadata → a plain JS object (key → value) for model.info().metadata.
#pragma once

#include <napi.h>

#include "gguf/gguf.h"

namespace tmill::addon {

// Scalars become numbers (64-bit integers beyond 2^53 become BigInt), strings stay strings, arrays up to
// k_max_inline_array elements become JS arrays; longer arrays (token lists, merges) are summarised as
// { arrayType, length } so info() stays small — the tokenizer API gives access to tokens.
constexpr size_t k_max_inline_array = 1024;

Napi::Object metadata_to_js(Napi::Env env, const gguf::file & file);

} // namespace tmill::addon
