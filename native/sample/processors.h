// Factories for the built-in logits processors, one file each. Every factory validates its fields of
// sampling_params (throwing tmill::error invalid_argument with vLLM's message) and returns nullptr when
// the processor is inactive for this request.
#pragma once

#include "sample/logits-processor.h"

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace tmill {

// What the n choices of one request share rather than build each: the first choice's sampler fills
// it, the others reuse it. A whole-vocabulary logit_bias (262k entries) merged per choice cost the
// engine thread a copy, a pass and maybe a sort per choice, between steps of every stream.
struct request_shared {
    std::shared_ptr<const std::vector<std::pair<int32_t, float>>> logit_bias;   // merged, clamped
};

processor_ptr make_allowed_token_ids(const sampling_params & p, const request_shape & shape);
processor_ptr make_bad_words(const sampling_params & p, const request_shape & shape);
processor_ptr make_min_tokens(const sampling_params & p, const request_shape & shape);
// `shared` (may be null): the request's merged list, built here by its first choice.
processor_ptr make_logit_bias(const sampling_params & p, const request_shape & shape, request_shared * shared = nullptr);
processor_ptr make_repetition_penalty(const sampling_params & p, const request_shape & shape);
processor_ptr make_frequency_penalty(const sampling_params & p, const request_shape & shape);
processor_ptr make_presence_penalty(const sampling_params & p, const request_shape & shape);
processor_ptr make_temperature(const sampling_params & p, const request_shape & shape);
processor_ptr make_min_p(const sampling_params & p, const request_shape & shape);
processor_ptr make_top_k(const sampling_params & p, const request_shape & shape);
processor_ptr make_top_p(const sampling_params & p, const request_shape & shape);
processor_ptr make_grammar_mask(const sampling_params & p, const request_shape & shape);

// vLLM's bad-word expansion (SamplingParams.update_from_tokenizer): each word, left-stripped, is
// tokenized as-is and with a leading space; the spaced variant is kept only when it starts with a
// different token and has the same length. `tokenize` encodes without special tokens. The result
// feeds sampling_params::bad_words_token_ids. (Only ASCII whitespace is stripped.)
using tokenize_fn = std::function<std::vector<int32_t>(const std::string & text)>;
std::vector<std::vector<int32_t>> bad_words_token_ids(const std::vector<std::string> & words, const tokenize_fn & tokenize);

// The temperature the sampler actually uses: 0 for greedy (t < 1e-5), at least 0.01 otherwise (vLLM).
float effective_temperature(float temperature);

} // namespace tmill
