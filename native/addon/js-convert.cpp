#include "addon/js-convert.h"

#include <cmath>
#include <limits>
#include <string>

#include "addon/js-errors.h"
#include "base/error.h"

namespace tmill::addon {

namespace {

class reader {
public:
    explicit reader(const Napi::Object & o) : o_(o) {}

    bool has(const char * key) const {
        Napi::Value v = o_.Get(key);
        return !v.IsUndefined() && !v.IsNull();
    }

    double number(const char * key, double fallback) const { return optional_number(o_, key, fallback); }

    int64_t integer(const char * key, int64_t fallback, int64_t lo, int64_t hi) const {
        const double d = number(key, double(fallback));
        TM_CHECK(d == std::floor(d) && d >= double(lo) && d <= double(hi), invalid_argument,
                 std::string("Expected an integer in [") + std::to_string(lo) + ", " + std::to_string(hi) + "] for " + key);
        return int64_t(d);
    }

    bool boolean(const char * key, bool fallback) const { return optional_bool(o_, key, fallback); }

    std::string string(const char * key) const {
        Napi::Value v = o_.Get(key);
        if (v.IsUndefined() || v.IsNull()) return {};
        return require_string(v, key);
    }

    std::vector<int32_t> ids(const char * key) const {
        Napi::Value v = o_.Get(key);
        std::vector<int32_t> out;
        if (v.IsUndefined() || v.IsNull()) return out;
        return ids_of(v, key);
    }

    std::vector<std::string> strings(const char * key) const {
        Napi::Value v = o_.Get(key);
        std::vector<std::string> out;
        if (v.IsUndefined() || v.IsNull()) return out;
        TM_CHECK(v.IsArray(), invalid_argument, std::string("Expected an array of strings for ") + key);
        Napi::Array a = v.As<Napi::Array>();
        for (uint32_t i = 0; i < a.Length(); ++i) out.push_back(require_string(a.Get(i), key));
        return out;
    }

    Napi::Value get(const char * key) const { return o_.Get(key); }

    static std::vector<int32_t> ids_of(const Napi::Value & v, const char * key) {
        std::vector<int32_t> out;
        if (v.IsTypedArray() && v.As<Napi::TypedArray>().TypedArrayType() == napi_int32_array) {
            Napi::Int32Array a = v.As<Napi::Int32Array>();
            out.assign(a.Data(), a.Data() + a.ElementLength());
            return out;
        }
        TM_CHECK(v.IsArray(), invalid_argument, std::string("Expected an Int32Array or an array of integers for ") + key);
        Napi::Array a = v.As<Napi::Array>();
        out.reserve(a.Length());
        for (uint32_t i = 0; i < a.Length(); ++i) {
            Napi::Value e = a.Get(i);
            TM_CHECK(e.IsNumber(), invalid_argument, std::string("Expected integers in ") + key);
            const double d = e.As<Napi::Number>().DoubleValue();
            TM_CHECK(d == std::floor(d) && d >= -2147483648.0 && d <= 2147483647.0, invalid_argument,
                     std::string("Expected 32-bit integers in ") + key);
            out.push_back(int32_t(d));
        }
        return out;
    }

private:
    Napi::Object o_;   // a handle (by value: readers are also built from temporaries)
};

xarg_value xarg_of(const Napi::Value & v) {
    if (v.IsNumber()) return xarg_value::of_number(v.As<Napi::Number>().DoubleValue());
    if (v.IsString()) return xarg_value::of_string(v.As<Napi::String>().Utf8Value());
    TM_CHECK(v.IsArray(), invalid_argument, "vllm_xargs values must be numbers, strings or lists of them");
    Napi::Array a = v.As<Napi::Array>();
    std::vector<xarg_value> items;
    for (uint32_t i = 0; i < a.Length(); ++i) items.push_back(xarg_of(a.Get(i)));
    return xarg_value::of_list(std::move(items));
}

constexpr int64_t k_i32_max = std::numeric_limits<int32_t>::max();

} // namespace

engine_params engine_params_from_js(const Napi::Object & o) {
    const reader r(o);
    engine_params p = engine_default_params();
    p.kv_cache_memory = size_t(r.integer("kvCacheMemory", int64_t(p.kv_cache_memory), 1, int64_t(1) << 50));
    p.max_num_seqs = int32_t(r.integer("maxNumSeqs", p.max_num_seqs, 1, 1 << 16));
    p.max_num_batched_tokens = int32_t(r.integer("maxNumBatchedTokens", p.max_num_batched_tokens, 1, 1 << 20));
    const std::string policy = r.string("schedulingPolicy");
    TM_CHECK(policy.empty() || policy == "fcfs" || policy == "priority", invalid_argument,
             "schedulingPolicy must be 'fcfs' or 'priority', got '" + policy + "'");
    p.policy = policy == "priority" ? sched_policy_kind::priority : sched_policy_kind::fcfs;
    p.n_threads = int32_t(r.integer("threads", 0, 0, 512));
    p.enable_prefix_caching = r.boolean("enablePrefixCaching", true);
    p.max_logprobs = int32_t(r.integer("maxLogprobs", p.max_logprobs, -1, k_i32_max));
    p.max_model_len = int32_t(r.integer("maxModelLen", 0, 0, k_i32_max));
    if (r.has("seed")) {
        p.has_seed = true;
        p.seed = r.integer("seed", 0, -(int64_t(1) << 53), int64_t(1) << 53);
    }
    return p;
}

engine_request engine_request_from_js(const Napi::Object & o) {
    const reader r(o);
    engine_request q;
    TM_CHECK(r.has("id"), invalid_argument, "request id is required");
    q.id = uint64_t(r.integer("id", 0, 0, (int64_t(1) << 53) - 1));
    TM_CHECK(r.has("promptTokens"), invalid_argument, "promptTokens is required");
    q.prompt = r.ids("promptTokens");
    q.max_tokens = int32_t(r.integer("maxTokens", -1, -1, k_i32_max));
    q.n = int32_t(r.integer("n", 1, 1, 1 << 16));
    q.prompt_logprobs = int32_t(r.integer("promptLogprobs", -1, -1, k_i32_max));
    if (r.has("repetitionDetection")) {
        Napi::Value v = r.get("repetitionDetection");
        TM_CHECK(v.IsObject() && !v.IsArray(), invalid_argument, "Expected an object for repetitionDetection");
        const reader rd(v.As<Napi::Object>());
        q.repetition.max_pattern_size = int32_t(rd.integer("maxPatternSize", 0, 0, k_i32_max));
        q.repetition.min_pattern_size = int32_t(rd.integer("minPatternSize", 0, 0, k_i32_max));
        q.repetition.min_count = int32_t(rd.integer("minCount", 0, 0, k_i32_max));
    }
    q.priority = r.integer("priority", 0, -(int64_t(1) << 53), int64_t(1) << 53);
    q.cache_salt = r.string("cacheSalt");
    q.stop = r.strings("stop");
    q.include_stop_str_in_output = r.boolean("includeStopStrInOutput", false);
    q.ignore_eos = r.boolean("ignoreEos", false);
    q.skip_special_tokens = r.boolean("skipSpecialTokens", true);
    q.spaces_between_special_tokens = r.boolean("spacesBetweenSpecialTokens", true);
    q.use_beam_search = r.boolean("useBeamSearch", false);
    q.length_penalty = float(r.number("lengthPenalty", 1.0));

    sampling_params & s = q.sampling;
    s.temperature = float(r.number("temperature", s.temperature));
    s.top_k = int32_t(r.integer("topK", s.top_k, -1, k_i32_max));
    s.top_p = float(r.number("topP", s.top_p));
    s.min_p = float(r.number("minP", s.min_p));
    s.repetition_penalty = float(r.number("repetitionPenalty", s.repetition_penalty));
    s.frequency_penalty = float(r.number("frequencyPenalty", s.frequency_penalty));
    s.presence_penalty = float(r.number("presencePenalty", s.presence_penalty));
    s.min_tokens = int32_t(r.integer("minTokens", 0, 0, k_i32_max));
    s.stop_token_ids = r.ids("stopTokenIds");
    s.logprobs = r.boolean("logprobs", false);
    s.top_logprobs = int32_t(r.integer("topLogprobs", 0, -1, k_i32_max));
    if (r.has("seed")) {
        s.has_seed = true;
        s.seed = r.integer("seed", 0, -(int64_t(1) << 53), int64_t(1) << 53);
    }
    if (r.has("allowedTokenIds")) s.allowed_token_ids = r.ids("allowedTokenIds");
    s.grammar_after = r.string("grammarAfter");   // the grammar itself is attached by js_engine::submit
    if (r.has("logitBias")) {
        // Two typed arrays, copied in one go: a bias may cover a whole vocabulary (262k ids).
        Napi::Value v = r.get("logitBias");
        TM_CHECK(v.IsObject() && !v.IsArray(), invalid_argument,
                 "Expected logitBias as { ids: Int32Array, bias: Float32Array }");
        const reader lb(v.As<Napi::Object>());
        const Napi::Value ids = lb.get("ids");
        const Napi::Value bias = lb.get("bias");
        TM_CHECK(ids.IsTypedArray() && ids.As<Napi::TypedArray>().TypedArrayType() == napi_int32_array, invalid_argument,
                 "Expected an Int32Array for logitBias.ids");
        TM_CHECK(bias.IsTypedArray() && bias.As<Napi::TypedArray>().TypedArrayType() == napi_float32_array,
                 invalid_argument, "Expected a Float32Array for logitBias.bias");
        const Napi::Int32Array id = ids.As<Napi::Int32Array>();
        const Napi::Float32Array b = bias.As<Napi::Float32Array>();
        TM_CHECK(id.ElementLength() == b.ElementLength(), invalid_argument,
                 "Expected logitBias.ids and logitBias.bias of equal length, got " + std::to_string(id.ElementLength()) +
                     " and " + std::to_string(b.ElementLength()));
        s.logit_bias.resize(id.ElementLength());
        for (size_t i = 0; i < s.logit_bias.size(); ++i) {
            TM_CHECK(std::isfinite(b.Data()[i]), invalid_argument, "Expected finite numbers in logitBias.bias");
            s.logit_bias[i] = {id.Data()[i], b.Data()[i]};
        }
    }
    if (r.has("badWordsTokenIds")) {
        Napi::Value v = r.get("badWordsTokenIds");
        TM_CHECK(v.IsArray(), invalid_argument, "Expected badWordsTokenIds as an array of token id arrays");
        Napi::Array a = v.As<Napi::Array>();
        for (uint32_t i = 0; i < a.Length(); ++i) s.bad_words_token_ids.push_back(reader::ids_of(a.Get(i), "badWordsTokenIds"));
    }
    if (r.has("xargs")) {
        Napi::Value v = r.get("xargs");
        TM_CHECK(v.IsObject() && !v.IsArray(), invalid_argument, "Expected an object for xargs");
        Napi::Object x = v.As<Napi::Object>();
        Napi::Array keys = x.GetPropertyNames();
        for (uint32_t i = 0; i < keys.Length(); ++i) {
            const std::string key = keys.Get(i).As<Napi::String>().Utf8Value();
            s.xargs[key] = xarg_of(x.Get(key));
        }
    }
    return q;
}

} // namespace tmill::addon
