// stop_checker: one sequence's stop rules. The engine feeds it every generated token with that
// token's UTF-8 text delta (from the incremental detokenizer); it answers with the text that may be
// streamed now and whether, and why, the sequence finished.
#pragma once

#include "decode/repetition-detector.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tmill {

struct stop_params {
    std::vector<std::string> stop;         // stop strings, matched on text; none may be empty
    std::vector<int32_t> stop_token_ids;   // finish `stop`, stop_reason = the id
    std::vector<int32_t> eos_token_ids;    // finish `stop`, stop_reason null; ignored with ignore_eos
    bool ignore_eos = false;
    bool include_stop_str_in_output = false;
    int32_t min_tokens = 0;                // no stop of any kind before this many output tokens
    int32_t max_tokens = INT32_MAX;        // effective output cap → `length`
    int32_t max_model_len = INT32_MAX;     // context end → `length`
    int32_t n_prompt = 0;
    repetition_params repetition;
};

enum class finish_reason { none, stop, length, repetition };

enum class stop_reason_kind { none, token, string };  // none = null (EOS, length)

struct stop_update {
    std::string_view text;                 // releasable now; a view valid until the next call
    bool finished = false;
    finish_reason reason = finish_reason::none;
    stop_reason_kind stop_kind = stop_reason_kind::none;
    int32_t stop_token = -1;               // when stop_kind == token
    std::string_view stop_string;          // when stop_kind == string: the matched stop string or "repetition_detected"
};

class stop_checker {
public:
    // Validates p (vLLM's messages) against the vocabulary size.
    stop_checker(const stop_params & p, int32_t n_vocab);

    // pre: `output` (n_output ids) already ends with `token`; text_delta is the text that token
    // added. Call once per generated token; after a finished update every call returns the same
    // finished state with no text. No throw; allocates only when a delta outgrows the reserved window.
    stop_update on_token(int32_t token, std::string_view text_delta, const int32_t * output, int32_t n_output);

    bool finished() const { return last_.finished; }
    int64_t n_text_released() const { return released_; }

private:
    int32_t hold_back() const;
    void trim_window();

    stop_params p_;
    size_t max_stop_len_ = 0;
    std::string window_;       // text [window_start_, total_) — the tail a stop string can still match, plus unreleased text
    int64_t window_start_ = 0; // absolute byte offset of window_[0] in the whole output text
    int64_t released_ = 0;     // absolute bytes already handed out
    stop_update last_;
};

const char * finish_reason_name(finish_reason r);  // "stop" | "length" | "repetition" | "" for none

} // namespace tmill
