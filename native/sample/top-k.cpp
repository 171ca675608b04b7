// top_k: keeps the tokens whose logit is at least the k-th largest (ties at the boundary are kept,
// as vLLM's `logits < kth_value → -inf` does). Selection is nth_element on a copy: O(n_vocab).
#include "sample/processors.h"

#include "base/error.h"

#include <algorithm>
#include <functional>
#include <limits>

namespace tmill {

namespace {

class top_k_processor final : public logits_processor {
public:
    explicit top_k_processor(int32_t k) : k_(k) {}
    const char * name() const override { return "top_k"; }
    processor_stage stage() const override { return processor_stage::truncate; }
    bool argmax_invariant() const override { return true; }
    void apply(float * row, const token_history &, sampler_workspace & ws) override {
        const int32_t n = ws.n_vocab;
        if (k_ >= n) return;
        float * v = ws.values.data();  // (n_vocab) copy of row, partially ordered below
        std::copy(row, row + n, v);
        std::nth_element(v, v + (k_ - 1), v + n, std::greater<float>());
        const float kth = v[k_ - 1];
        const float ninf = -std::numeric_limits<float>::infinity();
        for (int32_t i = 0; i < n; ++i)
            if (row[i] < kth) row[i] = ninf;
    }

private:
    int32_t k_;
};

} // namespace

processor_ptr make_top_k(const sampling_params & p, const request_shape & shape) {
    TM_CHECK(p.top_k >= -1, invalid_argument,
             "top_k must be 0 (disable), or at least 1, got " + std::to_string(p.top_k) + ".");
    if (p.top_k <= 0 || p.top_k >= shape.n_vocab) return nullptr;
    return std::make_unique<top_k_processor>(p.top_k);
}

} // namespace tmill
