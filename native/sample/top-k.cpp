// top_k: keeps the tokens whose logit is at least the k-th largest (ties at the boundary are kept,
// as vLLM's `logits < kth_value → -inf` does).
#include "sample/processors.h"

#include "base/error.h"

#include <algorithm>
#include <functional>
#include <limits>

namespace tmill {

namespace {

// NOTE(top-k): the k-th largest value is found with a size-k min-heap (one comparison for almost
// every token once the heap is warm) for k ≤ 4096, else with nth_element on a copy; both exact.
// Only the row's finite entries are visited when an earlier truncation listed them, and the
// survivors are listed for the truncations and the draw that follow.
class top_k_processor final : public logits_processor {
public:
    explicit top_k_processor(int32_t k) : k_(k) {}
    const char * name() const override { return "top_k"; }
    processor_stage stage() const override { return processor_stage::truncate; }
    bool argmax_invariant() const override { return true; }
    void apply(float * row, const token_history &, sampler_workspace & ws) override {
        const bool sparse = ws.n_candidates >= 0;
        const int32_t n = sparse ? ws.n_candidates : ws.n_vocab;
        const int32_t * cand = ws.candidates.data();  // (n) ids when sparse
        auto id_at = [&](int32_t j) { return sparse ? cand[j] : j; };
        if (k_ >= n) return;  // nothing to cut (and the candidate list stays as it is)
        float * v = ws.values.data();  // (k) min-heap of the k largest, or (n) a copy for nth_element
        float kth;
        if (k_ <= 4096) {
            for (int32_t j = 0; j < k_; ++j) v[j] = row[id_at(j)];
            std::make_heap(v, v + k_, std::greater<float>());
            for (int32_t j = k_; j < n; ++j) {
                const float x = row[id_at(j)];
                if (x > v[0]) {
                    std::pop_heap(v, v + k_, std::greater<float>());
                    v[k_ - 1] = x;
                    std::push_heap(v, v + k_, std::greater<float>());
                }
            }
            kth = v[0];
        } else {
            for (int32_t j = 0; j < n; ++j) v[j] = row[id_at(j)];
            std::nth_element(v, v + (k_ - 1), v + n, std::greater<float>());
            kth = v[k_ - 1];
        }
        const float ninf = -std::numeric_limits<float>::infinity();
        int32_t * out = ws.candidates.data();  // compacted in place: out index ≤ read index
        int32_t n_out = 0;
        for (int32_t j = 0; j < n; ++j) {
            const int32_t id = id_at(j);
            if (row[id] < kth) row[id] = ninf; else out[n_out++] = id;
        }
        ws.n_candidates = n_out;
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
