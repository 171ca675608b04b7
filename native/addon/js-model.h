// NativeModel: the JS wrapper of a loaded tmill::model, and loadModel(), its AsyncWorker factory.
#pragma once

#include <napi.h>

#include <memory>

#include "model/model.h"

namespace tmill::addon {

class js_model : public Napi::ObjectWrap<js_model> {
public:
    static Napi::Function define(Napi::Env env);
    static Napi::Value load(const Napi::CallbackInfo & info);   // loadModel(path, options) → Promise

    explicit js_model(const Napi::CallbackInfo & info);

    // The model, or a tmill::error(disposed) once dispose() ran.
    std::shared_ptr<const model> get() const;
    void set(std::shared_ptr<const model> m) { model_ = std::move(m); }

private:
    Napi::Value info(const Napi::CallbackInfo & info);
    Napi::Value tokenize(const Napi::CallbackInfo & info);
    Napi::Value tokenize_many(const Napi::CallbackInfo & info);   // (texts, addSpecial, parseSpecial) → Promise<Int32Array[]>
    Napi::Value detokenize(const Napi::CallbackInfo & info);
    Napi::Value token_piece(const Napi::CallbackInfo & info);
    Napi::Value evaluate_logits(const Napi::CallbackInfo & info);
    Napi::Value token_bytes(const Napi::CallbackInfo & info);
    Napi::Value measure_weight_read_bandwidth(const Napi::CallbackInfo & info);   // (threads, reps) → Promise
    Napi::Value dispose(const Napi::CallbackInfo & info);

    std::shared_ptr<const model> model_;
};

} // namespace tmill::addon
