#include "decode/stop-checker.h"

#include "base/error.h"

#include <algorithm>

namespace tmill {

static const char k_repetition_detected[] = "repetition_detected";

const char * finish_reason_name(finish_reason r) {
    switch (r) {
        case finish_reason::stop:       return "stop";
        case finish_reason::length:     return "length";
        case finish_reason::repetition: return "repetition";
        case finish_reason::none:       return "";
    }
    return "";
}

static std::string id_list(const std::vector<int32_t> & v) {
    std::string out = "[";
    for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + std::to_string(v[i]);
    return out + "]";
}

stop_checker::stop_checker(const stop_params & p, int32_t n_vocab) : p_(p) {
    TM_CHECK(p.max_tokens >= 1, invalid_argument, "max_tokens must be at least 1, got " + std::to_string(p.max_tokens) + ".");
    TM_CHECK(p.min_tokens >= 0, invalid_argument,
             "min_tokens must be greater than or equal to 0, got " + std::to_string(p.min_tokens) + ".");
    TM_CHECK(p.min_tokens <= p.max_tokens, invalid_argument,
             "min_tokens must be less than or equal to max_tokens=" + std::to_string(p.max_tokens) + ", got " +
                 std::to_string(p.min_tokens) + ".");
    for (const auto & s : p.stop) TM_CHECK(!s.empty(), invalid_argument, "stop cannot contain an empty string.");
    std::vector<int32_t> bad;
    for (int32_t id : p.stop_token_ids)
        if (id < 0 || id >= n_vocab) bad.push_back(id);
    TM_CHECK(bad.empty(), invalid_argument,
             "token_id(s) " + id_list(bad) + " in stop_token_ids contain out-of-vocab token ids. Vocabulary size: " +
                 std::to_string(n_vocab));
    validate_repetition_params(p.repetition);
    for (const auto & s : p_.stop) max_stop_len_ = std::max(max_stop_len_, s.size());
    window_.reserve(4 * max_stop_len_ + 256);
}

// Bytes at the end of the text that are a proper prefix of some stop string and so might still
// become a match: they stay unreleased. vLLM holds a flat max(len)−1 characters instead; holding
// only a real prefix releases text sooner and streams the same final text.
int32_t stop_checker::hold_back() const {
    if (p_.include_stop_str_in_output) return 0;  // the stop string is output anyway (vLLM holds 0 too)
    const size_t n = window_.size();
    size_t best = 0;
    for (const auto & s : p_.stop) {
        for (size_t k = std::min(s.size() - 1, n); k > best; --k) {
            if (window_.compare(n - k, k, s, 0, k) == 0) {
                best = k;
                break;
            }
        }
    }
    return (int32_t)best;
}

// Keeps only what a future match can touch: the last max_stop_len − 1 bytes, and anything unreleased.
void stop_checker::trim_window() {
    const int64_t total = window_start_ + (int64_t)window_.size();
    const int64_t keep_from = std::min<int64_t>(released_, std::max<int64_t>(0, total - (int64_t)max_stop_len_ + 1));
    if (keep_from > window_start_) {
        window_.erase(0, (size_t)(keep_from - window_start_));
        window_start_ = keep_from;
    }
}

// NOTE(stop): token rules run in vLLM's check_stop order — nothing before min_tokens, then EOS,
// stop token ids, length, repetition — and a stop string found in this step's text wins over all of
// them (vLLM's detokenizer overrides the scheduler's reason). A stop string must end inside this
// step's delta, so text produced before min_tokens was reached never matches.
stop_update stop_checker::on_token(int32_t token, std::string_view text_delta, const int32_t * output, int32_t n_output) {
    if (last_.finished) {
        stop_update done = last_;
        done.text = std::string_view();
        return done;
    }
    trim_window();
    stop_update u;

    // 1. token rules
    const bool context_end = (int64_t)p_.n_prompt + n_output >= p_.max_model_len;
    bool stop_token_hit = false;
    if (n_output >= p_.min_tokens) {
        if (!p_.ignore_eos && std::find(p_.eos_token_ids.begin(), p_.eos_token_ids.end(), token) != p_.eos_token_ids.end()) {
            u.finished = true;
            u.reason = finish_reason::stop;
            stop_token_hit = true;
        } else if (std::find(p_.stop_token_ids.begin(), p_.stop_token_ids.end(), token) != p_.stop_token_ids.end()) {
            u.finished = true;
            u.reason = finish_reason::stop;
            u.stop_kind = stop_reason_kind::token;
            u.stop_token = token;
            stop_token_hit = true;
        } else if (n_output >= p_.max_tokens || context_end) {
            u.finished = true;
            u.reason = finish_reason::length;
        } else if (has_repetition(output, n_output, p_.repetition)) {
            u.finished = true;
            u.reason = finish_reason::repetition;
            u.stop_kind = stop_reason_kind::string;
            u.stop_string = k_repetition_detected;
        }
    } else if (context_end) {
        // The context is full before min_tokens: nothing more can be generated.
        u.finished = true;
        u.reason = finish_reason::length;
    }

    // 2. text: the stop token's own text is kept only with include_stop_str_in_output
    const int64_t old_total = window_start_ + (int64_t)window_.size();
    if (!stop_token_hit || p_.include_stop_str_in_output) window_.append(text_delta.data(), text_delta.size());
    int64_t total = window_start_ + (int64_t)window_.size();

    // 3. stop strings, first in list order that ends inside the new text
    if (n_output > p_.min_tokens && total > old_total) {
        for (const auto & s : p_.stop) {
            const int64_t from = std::max<int64_t>(window_start_, old_total - (int64_t)s.size() + 1);
            const size_t at = window_.find(s, (size_t)(from - window_start_));
            if (at == std::string::npos) continue;
            int64_t cut = window_start_ + (int64_t)at + (p_.include_stop_str_in_output ? (int64_t)s.size() : 0);
            cut = std::max(cut, released_);  // released text is never taken back (hold-back makes this a no-op)
            if (cut < total) {
                window_.resize((size_t)(cut - window_start_));
                total = cut;
            }
            u.finished = true;
            u.reason = finish_reason::stop;
            u.stop_kind = stop_reason_kind::string;
            u.stop_string = s;
            u.stop_token = -1;
            break;
        }
    }

    // 4. release
    int64_t release_to = u.finished ? total : total - hold_back();
    release_to = std::max(release_to, released_);
    u.text = std::string_view(window_.data() + (released_ - window_start_), (size_t)(release_to - released_));
    released_ = release_to;
    last_ = u;
    return u;
}

} // namespace tmill
