// top_p (nucleus): keeps, in descending probability order, every token whose preceding mass is
// below p — vLLM's rule (`ascending cumsum ≤ 1 − p → -inf`, the top token always kept).
#include "sample/processors.h"

#include "base/error.h"
#include "sample/py-format.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tmill {

namespace {

// NOTE(top-p): the nucleus is almost always a short prefix of the sorted vocabulary, so we select
// the m largest logits (nth_element, O(n)), sort only those, and walk their mass; if the prefix does
// not reach p we retry with 8× more, ending in a full sort. The result equals a full sort's.
class top_p_processor final : public logits_processor {
public:
    explicit top_p_processor(float p) : p_(p) {}
    const char * name() const override { return "top_p"; }
    processor_stage stage() const override { return processor_stage::truncate; }
    bool argmax_invariant() const override { return true; }
    void apply(float * row, const token_history &, sampler_workspace & ws) override {
        const int32_t n = ws.n_vocab;
        float mx = -std::numeric_limits<float>::infinity();
        for (int32_t i = 0; i < n; ++i) mx = row[i] > mx ? row[i] : mx;
        if (!std::isfinite(mx)) return;
        double z = 0.0;
        int32_t n_finite = 0;
        int32_t * idx = ws.index.data();  // (n_vocab) ids of finite logits, largest first after selection
        for (int32_t i = 0; i < n; ++i) {
            if (row[i] == -std::numeric_limits<float>::infinity()) continue;
            z += std::exp((double)row[i] - mx);
            idx[n_finite++] = i;
        }
        const double target = (double)p_ * z;
        auto desc = [row](int32_t a, int32_t b) { return row[a] > row[b] || (row[a] == row[b] && a < b); };
        int32_t n_keep = -1;
        for (int32_t m = std::min<int32_t>(128, n_finite);; m = std::min<int32_t>(m * 8, n_finite)) {
            if (m < n_finite) std::nth_element(idx, idx + m, idx + n_finite, desc);
            std::sort(idx, idx + m, desc);
            double cum = 0.0;
            for (int32_t j = 0; j < m; ++j) {
                if (cum >= target) { n_keep = j; break; }
                cum += std::exp((double)row[idx[j]] - mx);
            }
            if (n_keep >= 0 || m == n_finite) break;
        }
        if (n_keep < 0) return;  // every finite token is inside the nucleus
        float * kept = ws.values.data();  // (n_keep) logits of the kept tokens while the row is cleared
        for (int32_t j = 0; j < n_keep; ++j) kept[j] = row[idx[j]];
        std::fill(row, row + n, -std::numeric_limits<float>::infinity());
        for (int32_t j = 0; j < n_keep; ++j) row[idx[j]] = kept[j];
    }

private:
    float p_;
};

} // namespace

processor_ptr make_top_p(const sampling_params & p, const request_shape &) {
    TM_CHECK(p.top_p > 0.0f && p.top_p <= 1.0f, invalid_argument,
             "top_p must be in (0, 1], got " + py_float(p.top_p) + ".");
    if (p.top_p == 1.0f) return nullptr;
    return std::make_unique<top_p_processor>(p.top_p);
}

} // namespace tmill
