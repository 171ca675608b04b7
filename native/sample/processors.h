// Factories for the built-in logits processors, one file each. Every factory validates its fields of
// sampling_params (throwing tmill::error invalid_argument with vLLM's message) and returns nullptr when
// the processor is inactive for this request.
#pragma once

#include "sample/logits-processor.h"

namespace tmill {

processor_ptr make_allowed_token_ids(const sampling_params & p, const request_shape & shape);
processor_ptr make_bad_words(const sampling_params & p, const request_shape & shape);
processor_ptr make_min_tokens(const sampling_params & p, const request_shape & shape);
processor_ptr make_logit_bias(const sampling_params & p, const request_shape & shape);
processor_ptr make_repetition_penalty(const sampling_params & p, const request_shape & shape);
processor_ptr make_frequency_penalty(const sampling_params & p, const request_shape & shape);
processor_ptr make_presence_penalty(const sampling_params & p, const request_shape & shape);
processor_ptr make_temperature(const sampling_params & p, const request_shape & shape);
processor_ptr make_min_p(const sampling_params & p, const request_shape & shape);
processor_ptr make_top_k(const sampling_params & p, const request_shape & shape);
processor_ptr make_top_p(const sampling_params & p, const request_shape & shape);

// The temperature the sampler actually uses: 0 for greedy (t < 1e-5), at least 0.01 otherwise (vLLM).
float effective_temperature(float temperature);

} // namespace tmill
