#include "engine/output-stream.h"

#include "decode/stop-checker.h"
#include "tokenizer/detokenizer.h"

namespace tmill {

namespace {

tok::detok_options detok_options_of(const engine_request & r) {
    tok::detok_options o;
    o.skip_special_tokens = r.skip_special_tokens;
    o.spaces_between_special_tokens = r.spaces_between_special_tokens;
    return o;
}

stop_params stop_params_of(const tok::vocab & v, const engine_request & r, int32_t max_tokens, int32_t max_model_len) {
    stop_params p;
    p.stop = r.stop;
    p.stop_token_ids = r.sampling.stop_token_ids;
    p.eos_token_ids = v.eog_ids();
    p.ignore_eos = r.ignore_eos;
    p.include_stop_str_in_output = r.include_stop_str_in_output;
    p.min_tokens = r.sampling.min_tokens;
    p.max_tokens = max_tokens;
    p.max_model_len = max_model_len;
    p.n_prompt = int32_t(r.prompt.size());
    p.repetition = r.repetition;
    return p;
}

} // namespace

class output_stream_impl {
public:
    output_stream_impl(const tok::vocab & v, const engine_request & r, int32_t max_tokens, int32_t max_model_len)
        : detok(v, detok_options_of(r)), checker(stop_params_of(v, r, max_tokens, max_model_len), v.n_tokens()) {
        detok.continue_after(r.prompt.data(), r.prompt.size());
    }

    tok::incremental_detokenizer detok;
    stop_checker checker;
};

output_stream::output_stream(const tok::vocab & v, const engine_request & request, int32_t max_tokens, int32_t max_model_len)
    : impl_(std::make_unique<output_stream_impl>(v, request, max_tokens, max_model_len)) {}

output_stream::~output_stream() = default;

stop_event output_stream::push(int32_t token, const int32_t * output, int32_t n_output, std::string & text) {
    std::string_view delta = impl_->detok.push(token);
    stop_update u = impl_->checker.on_token(token, delta, output, n_output);
    text.append(u.text);
    stop_event ev;
    if (!u.finished) return ev;
    if (u.reason == finish_reason::length) {
        // The sequence ends here: an incomplete UTF-8 tail becomes U+FFFD rather than vanishing.
        text.append(impl_->detok.flush());
    }
    ev.reason = u.reason == finish_reason::stop ? engine_finish::stop
              : u.reason == finish_reason::length ? engine_finish::length
              : engine_finish::repetition;
    if (u.stop_kind == stop_reason_kind::string) ev.stop_string = std::string(u.stop_string);
    if (u.stop_kind == stop_reason_kind::token) ev.stop_token = u.stop_token;
    return ev;
}

} // namespace tmill
