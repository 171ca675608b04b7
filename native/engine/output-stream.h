// output_stream: turns one sequence's generated tokens into released text and stop decisions —
// incremental UTF-8-safe detokenization, EOS / stop token ids, stop strings with hold-back, min_tokens.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "engine/engine.h"
#include "tokenizer/vocab.h"

namespace tmill {

struct stop_event {
    engine_finish reason = engine_finish::none;   // none, stop, length or repetition
    std::string stop_string;                      // the matched stop string, when one matched
    int32_t stop_token = -1;                      // the matched stop token id, when one matched
};

class output_stream_impl;

class output_stream {
public:
    output_stream(const tok::vocab & v, const engine_request & request, int32_t max_tokens, int32_t max_model_len);
    ~output_stream();

    // Feeds the token just generated; `output` (n_output ids) already ends with it. Appends the text
    // that can be released now to `text`; returns how this token ends the sequence, if it does
    // (EOS / stop token / stop string → stop, max tokens or context end → length, repetition).
    stop_event push(int32_t token, const int32_t * output, int32_t n_output, std::string & text);

private:
    std::unique_ptr<output_stream_impl> impl_;
};

} // namespace tmill
