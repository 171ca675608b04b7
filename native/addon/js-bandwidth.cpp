#include "addon/js-bandwidth.h"

#include <cmath>

#include "addon/js-errors.h"
#include "addon/js-promise-worker.h"
#include "base/error.h"
#include "base/read-bandwidth.h"

namespace tmill::addon {

namespace {

class bandwidth_worker : public promise_worker {
public:
    bandwidth_worker(Napi::Env env, size_t bytes, int threads, int reps)
        : promise_worker(env), bytes_(bytes), threads_(threads), reps_(reps) {}

private:
    void work() override { result_ = tmill::measure_read_bandwidth(bytes_, threads_, reps_); }
    Napi::Value result(Napi::Env env) override { return Napi::Number::New(env, result_); }

    size_t bytes_;
    int threads_;
    int reps_;
    double result_ = 0.0;
};

class weight_bandwidth_worker : public promise_worker {
public:
    weight_bandwidth_worker(Napi::Env env, std::shared_ptr<const model> m, int threads, int reps)
        : promise_worker(env), model_(std::move(m)), threads_(threads), reps_(reps) {}

private:
    void work() override {
        const std::vector<byte_range> ranges = decode_read_set(*model_->weights);
        for (const byte_range & r : ranges) bytes_ += r.bytes;
        rate_ = tmill::measure_read_bandwidth(ranges, threads_, reps_);
    }
    Napi::Value result(Napi::Env env) override {
        Napi::Object o = Napi::Object::New(env);
        o.Set("bytesPerSecond", rate_);
        o.Set("bytes", double(bytes_));
        return o;
    }

    std::shared_ptr<const model> model_;   // keeps the mapping alive while the passes read it
    int threads_;
    int reps_;
    size_t bytes_ = 0;
    double rate_ = 0.0;
};

// An integer argument in [lo, hi], else invalid_argument naming it.
double require_integer(const Napi::Value & v, const char * name, double lo, double hi) {
    TM_CHECK(v.IsNumber(), invalid_argument, std::string("Expected a number for ") + name);
    const double d = v.As<Napi::Number>().DoubleValue();
    TM_CHECK(std::isfinite(d) && d == std::floor(d) && d >= lo && d <= hi, invalid_argument,
             std::string("Expected an integer in [") + std::to_string(int64_t(lo)) + ", " + std::to_string(int64_t(hi)) +
                 "] for " + name);
    return d;
}

} // namespace

Napi::Value measure_read_bandwidth(const Napi::CallbackInfo & info) {
    Napi::Env env = info.Env();
    return guard(env, [&]() -> Napi::Value {
        const double bytes = require_integer(info[0], "bytes", double(1 << 20), double(int64_t(1) << 36));
        const double threads = require_integer(info[1], "threads", 1, 1024);
        const double reps = require_integer(info[2], "reps", 1, 100);
        return (new bandwidth_worker(env, size_t(bytes), int(threads), int(reps)))->start();
    });
}

Napi::Value measure_weight_read_bandwidth(const Napi::CallbackInfo & info, std::shared_ptr<const model> m) {
    Napi::Env env = info.Env();
    return guard(env, [&]() -> Napi::Value {
        TM_CHECK(m->weights.has_value(), invalid_argument, "the model was loaded vocabOnly: it has no weights to read");
        const double threads = require_integer(info[0], "threads", 1, 1024);
        const double reps = require_integer(info[1], "reps", 1, 100);
        return (new weight_bandwidth_worker(env, std::move(m), int(threads), int(reps)))->start();
    });
}

} // namespace tmill::addon
