#include "addon/js-model.h"

#include <string>
#include <vector>

#include "addon/addon-state.h"
#include "addon/js-bandwidth.h"
#include "addon/js-errors.h"
#include "addon/js-metadata.h"
#include "addon/js-promise-worker.h"
#include "base/error.h"
#include "model/evaluate.h"

namespace tmill::addon {

namespace {

// Loads a model on a libuv worker thread; resolves with a NativeModel.
class load_worker : public promise_worker {
public:
    load_worker(Napi::Env env, std::string path, model_load_options options)
        : promise_worker(env), path_(std::move(path)), options_(options) {}

private:
    void work() override { model_ = model_load(path_, options_); }
    Napi::Value result(Napi::Env env) override {
        Napi::Object obj = addon_state::of(env).model_ctor.New({});
        js_model::Unwrap(obj)->set(model_);
        return obj;
    }

    std::string path_;
    model_load_options options_;
    std::shared_ptr<const model> model_;
};

// Runs evaluate() on a libuv worker thread; resolves with a Float32Array (n_tokens × n_vocab).
class evaluate_worker : public promise_worker {
public:
    evaluate_worker(Napi::Env env, std::shared_ptr<const model> m, std::vector<int32_t> tokens, int32_t n_threads)
        : promise_worker(env), model_(std::move(m)), tokens_(std::move(tokens)), n_threads_(n_threads) {}

private:
    void work() override { logits_ = evaluate(model_, tokens_, n_threads_); }
    Napi::Value result(Napi::Env env) override {
        Napi::Float32Array out = Napi::Float32Array::New(env, logits_.size());
        std::copy(logits_.begin(), logits_.end(), out.Data());
        return out;
    }

    std::shared_ptr<const model> model_;
    std::vector<int32_t> tokens_;
    int32_t n_threads_;
    std::vector<float> logits_;
};

// NOTE(addon/tokenize-many): tokenizes a list of texts on a libuv worker thread, so a request's long
// prompt (megabytes take hundreds of milliseconds) or long bad_words list never holds the JS thread.
// The texts are copied to UTF-8 on the JS thread (a memcpy-speed pass); the vocabulary is immutable and
// shared, so several of these may run at once. Resolves with one Int32Array per text.
class tokenize_many_worker : public promise_worker {
public:
    tokenize_many_worker(Napi::Env env, std::shared_ptr<const model> m, std::vector<std::string> texts, bool add_special, bool parse_special)
        : promise_worker(env), model_(std::move(m)), texts_(std::move(texts)), add_special_(add_special),
          parse_special_(parse_special) {}

private:
    void work() override {
        ids_.resize(texts_.size());
        for (size_t i = 0; i < texts_.size(); ++i) model_->vocab->tokenize(texts_[i], add_special_, parse_special_, ids_[i]);
    }
    Napi::Value result(Napi::Env env) override {
        Napi::Array out = Napi::Array::New(env, ids_.size());
        for (size_t i = 0; i < ids_.size(); ++i) {
            Napi::Int32Array a = Napi::Int32Array::New(env, ids_[i].size());
            std::copy(ids_[i].begin(), ids_[i].end(), a.Data());
            out.Set(uint32_t(i), a);
        }
        return out;
    }

    std::shared_ptr<const model> model_;
    std::vector<std::string> texts_;
    bool add_special_;
    bool parse_special_;
    std::vector<std::vector<int32_t>> ids_;
};

Napi::Value nullable_id(Napi::Env env, int32_t id) {
    return id < 0 ? env.Null() : Napi::Number::New(env, id);
}

Napi::Object hparams_to_js(Napi::Env env, const hparams & hp) {
    Napi::Object o = Napi::Object::New(env);
    o.Set("nCtxTrain", hp.n_ctx_train);
    o.Set("nEmbd", hp.n_embd);
    o.Set("nLayer", hp.n_layer);
    o.Set("nFf", hp.n_ff);
    o.Set("nHead", hp.n_head);
    o.Set("nHeadKv", hp.n_head_kv);
    o.Set("headDim", hp.head_dim);
    o.Set("nRot", hp.n_rot);
    o.Set("rmsEps", hp.rms_eps);
    o.Set("ropeFreqBase", hp.rope_freq_base);
    o.Set("ropeFreqScale", hp.rope_freq_scale);
    o.Set("ropeScaling", hp.rope_scaling_type == rope_scaling::linear ? "linear" : "none");
    o.Set("ropeStyle", hp.rope == rope_style::neox ? "neox" : "normal");
    o.Set("ffnActivation", hp.ffn_act == ffn_activation::gelu ? "gelu" : "silu");
    o.Set("slidingWindow", hp.n_swa);
    o.Set("slidingWindowLayers", [&] {
        uint32_t n = 0;
        for (uint32_t il = 0; il < hp.n_layer; ++il) n += hp.is_swa(il) ? 1 : 0;
        return n;
    }());
    return o;
}

} // namespace

Napi::Function js_model::define(Napi::Env env) {
    return DefineClass(env, "NativeModel", {
        InstanceMethod<&js_model::info>("info"),
        InstanceMethod<&js_model::tokenize>("tokenize"),
        InstanceMethod<&js_model::tokenize_many>("tokenizeMany"),
        InstanceMethod<&js_model::detokenize>("detokenize"),
        InstanceMethod<&js_model::token_piece>("tokenPiece"),
        InstanceMethod<&js_model::evaluate_logits>("evaluate"),
        InstanceMethod<&js_model::token_bytes>("tokenBytes"),
        InstanceMethod<&js_model::measure_weight_read_bandwidth>("measureWeightReadBandwidth"),
        InstanceMethod<&js_model::dispose>("dispose"),
    });
}

js_model::js_model(const Napi::CallbackInfo & info) : Napi::ObjectWrap<js_model>(info) {}

std::shared_ptr<const model> js_model::get() const {
    TM_CHECK(model_ != nullptr, disposed, "model is disposed");
    return model_;
}

Napi::Value js_model::load(const Napi::CallbackInfo & info) {
    Napi::Env env = info.Env();
    return guard(env, [&]() -> Napi::Value {
        std::string path = require_string(info[0], "path");
        model_load_options options;
        if (info.Length() > 1 && !info[1].IsUndefined()) {
            const Napi::Object o = require_object(info[1], "options");
            options.vocab_only = optional_bool(o, "vocabOnly", false);
            const double limit = optional_number(o, "memoryLimit", 0.0);
            TM_CHECK(limit >= 0.0 && limit < 1.8e19, invalid_argument, "Expected a number of bytes for memoryLimit");
            options.memory_limit = uint64_t(limit);
        }
        return (new load_worker(env, std::move(path), options))->start();
    });
}

Napi::Value js_model::info(const Napi::CallbackInfo & info) {
    Napi::Env env = info.Env();
    return guard(env, [&]() -> Napi::Value {
        const auto m = get();
        const gguf::file & f = m->files->first();
        const tok::vocab & v = *m->vocab;
        Napi::Object o = Napi::Object::New(env);
        o.Set("path", f.path());
        o.Set("ggufVersion", f.version());
        const auto arch = f.get_string("general.architecture");
        o.Set("architecture", arch ? Napi::String::New(env, std::string(*arch)) : env.Null());
        const auto name = f.get_string("general.name");
        o.Set("name", name ? Napi::String::New(env, std::string(*name)) : env.Null());
        o.Set("contextLength", m->hp ? Napi::Number::New(env, m->hp->n_ctx_train) : env.Null());
        o.Set("vocabSize", m->hp ? m->hp->n_vocab : uint32_t(v.n_tokens()));
        o.Set("tokenizerModel", v.type() == tok::vocab_type::spm ? "llama" : "gpt2");
        const auto pre = f.get_string("tokenizer.ggml.pre");
        o.Set("tokenizerPre", pre ? Napi::String::New(env, std::string(*pre)) : env.Null());
        o.Set("bosTokenId", nullable_id(env, v.bos()));
        o.Set("eosTokenId", nullable_id(env, v.eos()));
        Napi::Array eot = Napi::Array::New(env);
        for (int32_t id : v.eog_ids()) eot.Set(eot.Length(), id);
        o.Set("eotTokenIds", eot);
        o.Set("addBosToken", v.add_bos());
        o.Set("addEosToken", v.add_eos());
        const auto tmpl = f.get_string("tokenizer.chat_template");
        o.Set("chatTemplate", tmpl ? Napi::String::New(env, tmpl->data(), tmpl->size()) : env.Null());
        const auto file_type = f.get_u32("general.file_type");
        o.Set("fileType", file_type ? Napi::Number::New(env, *file_type) : env.Null());
        o.Set("hparams", m->hp ? Napi::Value(hparams_to_js(env, *m->hp)) : env.Null());
        const auto & all = m->files->tensors();
        Napi::Array tensors = Napi::Array::New(env, all.size());
        double file_bytes = 0;
        for (size_t i = 0; i < all.size(); ++i) {
            const gguf::tensor_info & t = all[i];
            Napi::Object to = Napi::Object::New(env);
            to.Set("name", Napi::String::New(env, t.name.data(), t.name.size()));
            const char * type_name = ggml_type_info(uint32_t(t.type)).name;
            to.Set("type", type_name ? type_name : "unknown");
            Napi::Array shape = Napi::Array::New(env, t.n_dims);
            for (uint32_t d = 0; d < t.n_dims; ++d) shape.Set(d, Napi::Number::New(env, double(t.ne[d])));
            to.Set("shape", shape);
            to.Set("bytes", Napi::Number::New(env, double(t.n_bytes)));
            tensors.Set(uint32_t(i), to);
            file_bytes += double(t.n_bytes);
        }
        o.Set("tensors", tensors);
        o.Set("weightBytes", Napi::Number::New(env, file_bytes - double(m->repacked.replaced) + double(m->repacked.size)));
        o.Set("repackedBytes", Napi::Number::New(env, double(m->repacked.size)));
        o.Set("metadata", metadata_to_js(env, f));
        return o;
    });
}

Napi::Value js_model::tokenize(const Napi::CallbackInfo & info) {
    Napi::Env env = info.Env();
    return guard(env, [&]() -> Napi::Value {
        const auto m = get();
        const std::string text = require_string(info[0], "text");
        const bool add_special = info[1].ToBoolean().Value();
        const bool parse_special = info[2].ToBoolean().Value();
        const std::vector<int32_t> ids = m->vocab->tokenize(text, add_special, parse_special);
        Napi::Int32Array out = Napi::Int32Array::New(env, ids.size());
        std::copy(ids.begin(), ids.end(), out.Data());
        return out;
    });
}

Napi::Value js_model::tokenize_many(const Napi::CallbackInfo & info) {
    Napi::Env env = info.Env();
    return guard(env, [&]() -> Napi::Value {
        auto m = get();
        TM_CHECK(info[0].IsArray(), invalid_argument, "Expected an array of strings for texts");
        Napi::Array list = info[0].As<Napi::Array>();
        std::vector<std::string> texts;
        texts.reserve(list.Length());
        for (uint32_t i = 0; i < list.Length(); ++i) texts.push_back(require_string(list.Get(i), ("texts[" + std::to_string(i) + "]").c_str()));
        return (new tokenize_many_worker(env, std::move(m), std::move(texts), info[1].ToBoolean().Value(), info[2].ToBoolean().Value()))->start();
    });
}

Napi::Value js_model::detokenize(const Napi::CallbackInfo & info) {
    Napi::Env env = info.Env();
    return guard(env, [&]() -> Napi::Value {
        const auto m = get();
        TM_CHECK(info[0].IsTypedArray() && info[0].As<Napi::TypedArray>().TypedArrayType() == napi_int32_array,
                 invalid_argument, "Expected an Int32Array for ids");
        Napi::Int32Array ids = info[0].As<Napi::Int32Array>();
        tok::detok_options options;
        if (info.Length() > 1 && !info[1].IsUndefined()) {
            Napi::Object o = require_object(info[1], "options");
            options.skip_special_tokens = optional_bool(o, "skipSpecialTokens", true);
            options.spaces_between_special_tokens = optional_bool(o, "spacesBetweenSpecialTokens", true);
        }
        const int32_t n_tokens = int32_t(m->vocab->n_tokens());
        for (size_t i = 0; i < ids.ElementLength(); ++i) {
            TM_CHECK(ids[i] >= 0 && ids[i] < n_tokens, invalid_argument,
                     "token id " + std::to_string(ids[i]) + " at index " + std::to_string(i) +
                     " is out of the vocabulary (0.." + std::to_string(n_tokens - 1) + ")");
        }
        const std::string text = m->vocab->detokenize(ids.Data(), ids.ElementLength(), options);
        return Napi::String::New(env, text);
    });
}

// The token id argument of tokenPiece/tokenBytes, checked against the vocabulary.
static int32_t token_id_arg(const Napi::CallbackInfo & info, const model & m) {
    TM_CHECK(info[0].IsNumber(), invalid_argument, "Expected a number for id");
    const int64_t id = info[0].As<Napi::Number>().Int64Value();
    TM_CHECK(id >= 0 && id < int64_t(m.vocab->n_tokens()), invalid_argument,
             "token id " + std::to_string(id) + " is out of the vocabulary");
    return int32_t(id);
}

Napi::Value js_model::token_piece(const Napi::CallbackInfo & info) {
    Napi::Env env = info.Env();
    return guard(env, [&]() -> Napi::Value {
        const auto m = get();
        return Napi::String::New(env, m->vocab->token_to_piece(token_id_arg(info, *m)));
    });
}

Napi::Value js_model::token_bytes(const Napi::CallbackInfo & info) {
    Napi::Env env = info.Env();
    return guard(env, [&]() -> Napi::Value {
        const auto m = get();
        const std::string piece = m->vocab->token_to_piece(token_id_arg(info, *m));
        Napi::Uint8Array out = Napi::Uint8Array::New(env, piece.size());
        std::copy(piece.begin(), piece.end(), out.Data());
        return out;
    });
}

Napi::Value js_model::measure_weight_read_bandwidth(const Napi::CallbackInfo & info) {
    return guard(info.Env(), [&]() -> Napi::Value { return addon::measure_weight_read_bandwidth(info, get()); });
}

Napi::Value js_model::evaluate_logits(const Napi::CallbackInfo & info) {
    Napi::Env env = info.Env();
    return guard(env, [&]() -> Napi::Value {
        const auto m = get();
        TM_CHECK(info[0].IsTypedArray() && info[0].As<Napi::TypedArray>().TypedArrayType() == napi_int32_array,
                 invalid_argument, "Expected an Int32Array for tokens");
        Napi::Int32Array ids = info[0].As<Napi::Int32Array>();
        std::vector<int32_t> tokens(ids.Data(), ids.Data() + ids.ElementLength());
        const int32_t n_threads = info[1].IsNumber() ? info[1].As<Napi::Number>().Int32Value() : 0;
        return (new evaluate_worker(env, m, std::move(tokens), n_threads))->start();
    });
}

Napi::Value js_model::dispose(const Napi::CallbackInfo & info) {
    model_.reset();
    return info.Env().Undefined();
}

} // namespace tmill::addon
