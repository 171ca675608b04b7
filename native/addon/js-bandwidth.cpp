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

} // namespace tmill::addon
