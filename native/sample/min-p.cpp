// min_p: drops tokens whose probability is below min_p × the top probability. In logit space that is
// `logit < max_logit + log(min_p)`, which needs no softmax. The survivors are listed for the
// truncations and the draw that follow.
#include "sample/processors.h"

#include "base/error.h"
#include "sample/py-format.h"
#include "sample/vec-math.h"

#include <cmath>
#include <limits>

namespace tmill {

namespace {

class min_p_processor final : public logits_processor {
public:
    explicit min_p_processor(float min_p) : log_min_p_(std::log(min_p)) {}
    const char * name() const override { return "min_p"; }
    processor_stage stage() const override { return processor_stage::truncate; }
    bool argmax_invariant() const override { return true; }
    void apply(float * row, const token_history &, sampler_workspace & ws) override {
        const bool sparse = ws.n_candidates >= 0;
        const int32_t n = sparse ? ws.n_candidates : ws.n_vocab;
        int32_t * cand = ws.candidates.data();  // (n) ids when sparse; compacted in place
        float mx = -std::numeric_limits<float>::infinity();
        if (sparse) {
            for (int32_t j = 0; j < n; ++j) mx = row[cand[j]] > mx ? row[cand[j]] : mx;
        } else {
            mx = row_max(row, n);
        }
        if (!std::isfinite(mx)) return;
        const float thr = mx + log_min_p_;
        const float ninf = -std::numeric_limits<float>::infinity();
        int32_t n_out = 0;
        for (int32_t j = 0; j < n; ++j) {
            const int32_t id = sparse ? cand[j] : j;
            if (row[id] < thr) row[id] = ninf; else cand[n_out++] = id;
        }
        ws.n_candidates = n_out;
    }

private:
    float log_min_p_;
};

} // namespace

processor_ptr make_min_p(const sampling_params & p, const request_shape &) {
    TM_CHECK(p.min_p >= 0.0f && p.min_p <= 1.0f, invalid_argument,
             "min_p must be in [0, 1], got " + py_float(p.min_p) + ".");
    if (p.min_p == 0.0f) return nullptr;
    return std::make_unique<min_p_processor>(p.min_p);
}

} // namespace tmill
