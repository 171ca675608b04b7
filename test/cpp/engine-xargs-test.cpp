// vllm_xargs end to end through the engine on stories260K: a custom logits processor registered in C++
// (the only place processors can be registered) is built per request from the request's xargs, sees the
// output history every step, and a factory that rejects the xargs fails only that request.
#include "check.h"

#include "engine/engine.h"
#include "model/model.h"
#include "sample/processor-registry.h"

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <string>
#include <vector>

namespace {

std::string stories260k_path() {
    const char * env = std::getenv("TOKENMILL_SHARED");
    return std::string(env && *env ? env : "../shared") + "/models/stories260K.gguf";
}

// On even output positions only xargs["force"] survives; odd positions are left alone. Uses the
// history, so a processor that never saw it (or saw the wrong one) gives other tokens.
class force_even_processor final : public tmill::logits_processor {
public:
    explicit force_even_processor(int32_t id) : id_(id) {}
    const char * name() const override { return "test-force-even"; }
    tmill::processor_stage stage() const override { return tmill::processor_stage::mask; }
    bool argmax_invariant() const override { return false; }
    void apply(float * row, const tmill::token_history & h, tmill::sampler_workspace & ws) override {
        if (h.n_output % 2 != 0) return;
        for (int32_t t = 0; t < ws.n_vocab; ++t)
            if (t != id_) row[t] = -std::numeric_limits<float>::infinity();
    }

private:
    int32_t id_;
};

struct run_result {
    std::vector<int32_t> tokens;
    tmill::engine_finish finish = tmill::engine_finish::none;
    std::string error_message;
};

// Submits one request and collects its records until the done record (10 s at most).
struct engine_runner {
    std::mutex mu;
    std::condition_variable cv;
    bool ready = false;
    tmill::engine eng;

    explicit engine_runner(std::shared_ptr<const tmill::model> m)
        : eng(std::move(m), params(), [this] {
              std::lock_guard<std::mutex> lock(mu);
              ready = true;
              cv.notify_one();
          }) {}

    static tmill::engine_params params() {
        tmill::engine_params p = tmill::engine_default_params();
        p.kv_cache_memory = size_t(4) << 20;
        p.n_threads = 1;
        return p;
    }

    run_result run(tmill::engine_request r) {
        const uint64_t id = r.id;
        eng.submit(std::move(r));
        run_result out;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        for (;;) {
            {
                std::unique_lock<std::mutex> lock(mu);
                if (!cv.wait_until(lock, deadline, [this] { return ready; })) {
                    CHECK(!"request did not finish in 10 s");
                    return out;
                }
                ready = false;
            }
            for (auto & rec : eng.drain()) {
                if (rec.id != id) continue;
                out.tokens.insert(out.tokens.end(), rec.tokens.begin(), rec.tokens.end());
                if (rec.finish != tmill::engine_finish::none) {
                    out.finish = rec.finish;
                    out.error_message = rec.error_message;
                }
                if (rec.done) return out;
            }
        }
    }
};

tmill::engine_request greedy_request(uint64_t id, int32_t max_tokens) {
    tmill::engine_request r;
    r.id = id;
    r.prompt = {1, 403, 407, 261, 378};  // "Once upon a time"
    r.max_tokens = max_tokens;
    r.sampling.temperature = 0.0f;
    return r;
}

} // namespace

TM_TEST("engine: vllm_xargs reach a registered custom processor per request") {
    auto m = tmill::model_load(stories260k_path(), {});
    tmill::register_logits_processor("test-engine-force-even", [](const tmill::xargs_map & x, const tmill::request_shape & shape) -> tmill::processor_ptr {
        auto it = x.find("force");
        if (it == x.end()) return nullptr;
        TM_CHECK(it->second.type == tmill::xarg_value::kind::number && it->second.number >= 0 &&
                     it->second.number < shape.n_vocab,
                 invalid_argument, "force must be a token id");
        return std::make_unique<force_even_processor>((int32_t)it->second.number);
    });
    {
        engine_runner runner(m);
        const run_result plain = runner.run(greedy_request(1, 8));
        CHECK_EQ(plain.tokens.size(), size_t(8));
        CHECK(plain.finish == tmill::engine_finish::length);

        // Unrelated xargs: the processor stays inactive and nothing changes.
        tmill::engine_request other = greedy_request(2, 8);
        other.sampling.xargs["unrelated"] = tmill::xarg_value::of_number(3);
        CHECK(runner.run(std::move(other)).tokens == plain.tokens);

        const int32_t force = 300;
        tmill::engine_request forced = greedy_request(3, 8);
        forced.sampling.xargs["force"] = tmill::xarg_value::of_number(force);
        const run_result got = runner.run(std::move(forced));
        CHECK_EQ(got.tokens.size(), size_t(8));
        for (size_t i = 0; i < got.tokens.size(); i += 2) CHECK_EQ(got.tokens[i], force);
        CHECK(got.tokens != plain.tokens);
        // Odd positions are the model's own greedy choice after the forced token: not all `force`.
        bool free_choice = false;
        for (size_t i = 1; i < got.tokens.size(); i += 2) free_choice = free_choice || got.tokens[i] != force;
        CHECK(free_choice);

        // A factory that rejects the xargs fails that request alone, with its message.
        tmill::engine_request bad = greedy_request(4, 8);
        bad.sampling.xargs["force"] = tmill::xarg_value::of_string("x");
        const run_result failed = runner.run(std::move(bad));
        CHECK(failed.finish == tmill::engine_finish::error);
        CHECK(failed.error_message.find("force must be a token id") != std::string::npos);
        CHECK(runner.run(greedy_request(5, 8)).tokens == plain.tokens);
        runner.eng.close();
    }
    CHECK(tmill::unregister_logits_processor("test-engine-force-even"));
}
