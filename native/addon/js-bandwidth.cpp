#include "addon/js-bandwidth.h"

#include <cmath>

#include "addon/js-errors.h"
#include "base/error.h"
#include "base/read-bandwidth.h"

namespace tmill::addon {

namespace {

class bandwidth_worker : public Napi::AsyncWorker {
public:
    bandwidth_worker(Napi::Env env, size_t bytes, int threads, int reps)
        : Napi::AsyncWorker(env), deferred_(Napi::Promise::Deferred::New(env)), bytes_(bytes), threads_(threads),
          reps_(reps) {}

    Napi::Promise promise() { return deferred_.Promise(); }

    void Execute() override {
        ok_ = capture_error([&] { result_ = tmill::measure_read_bandwidth(bytes_, threads_, reps_); }, failure_);
    }

    void OnOK() override {
        if (ok_) {
            deferred_.Resolve(Napi::Number::New(Env(), result_));
        } else {
            deferred_.Reject(make_error(Env(), failure_.code, failure_.message).Value());
        }
    }

private:
    Napi::Promise::Deferred deferred_;
    size_t bytes_;
    int threads_;
    int reps_;
    double result_ = 0.0;
    captured_error failure_;
    bool ok_ = false;
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
        auto * worker = new bandwidth_worker(env, size_t(bytes), int(threads), int(reps));
        Napi::Promise promise = worker->promise();
        worker->Queue();
        return promise;
    });
}

} // namespace tmill::addon
