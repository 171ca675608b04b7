// top_p (nucleus): keeps, in descending probability order, every token whose preceding mass is
// below p — vLLM's rule (`ascending cumsum ≤ 1 − p → -inf`, the top token always kept).
#include "sample/processors.h"

#include "base/error.h"
#include "sample/py-format.h"
#include "sample/vec-math.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tmill {

namespace {

constexpr int32_t k_n_buckets = 512;    // buckets over (max − logit) in [0, k_span)
constexpr float k_span = 32.0f;         // e^-32 ≈ 1e-14: everything lower shares the last bucket

inline int32_t bucket_of(float max_logit, float logit) {
    const float d = (max_logit - logit) * (k_n_buckets / k_span);
    return d < (float)k_n_buckets ? (int32_t)d : k_n_buckets;
}

// NOTE(top-p): no full sort. One pass buckets the probability mass by distance from the max logit;
// the bucket where the running mass crosses p·Z is the only place the cut can fall. Tokens in
// higher buckets all have preceding mass < p·Z (kept), tokens in lower ones ≥ p·Z (dropped), and
// only the crossing bucket's tokens are sorted and walked. Same result as sorting everything.
// When an earlier truncation listed the finite entries, only those are visited.
class top_p_processor final : public logits_processor {
public:
    explicit top_p_processor(float p) : p_(p) {}
    const char * name() const override { return "top_p"; }
    processor_stage stage() const override { return processor_stage::truncate; }
    bool argmax_invariant() const override { return true; }
    void apply(float * row, const token_history &, sampler_workspace & ws) override {
        const bool sparse = ws.n_candidates >= 0;
        const int32_t n = sparse ? ws.n_candidates : ws.n_vocab;
        int32_t * cand = ws.candidates.data();  // (n) ids when sparse; survivors written back
        auto id_at = [&](int32_t j) { return sparse ? cand[j] : j; };
        float * e = ws.values.data();           // (n) exp(logit - max) per position j

        float mx = -std::numeric_limits<float>::infinity();
        double z = 0.0;
        if (sparse) {
            for (int32_t j = 0; j < n; ++j) mx = row[cand[j]] > mx ? row[cand[j]] : mx;
            if (!std::isfinite(mx)) return;
            for (int32_t j = 0; j < n; ++j) {
                e[j] = exp_approx(row[cand[j]] - mx);
                z += e[j];
            }
        } else {
            mx = row_max(row, n);
            if (!std::isfinite(mx)) return;
            z = sum_exp(row, n, mx, e);
        }
        const double target = (double)p_ * z;

        double mass[k_n_buckets + 1] = {};  // (n_buckets + 1) probability mass per bucket
        for (int32_t j = 0; j < n; ++j)
            if (e[j] > 0.0f) mass[bucket_of(mx, row[id_at(j)])] += e[j];
        int32_t cross = -1;
        double before = 0.0;  // mass of the buckets above the crossing one
        for (int32_t b = 0; b <= k_n_buckets; ++b) {
            if (before + mass[b] >= target) { cross = b; break; }
            before += mass[b];
        }
        if (cross < 0) return;  // rounding: the nucleus is every token with mass

        int32_t * in = ws.index.data();  // (n_in) positions j in the crossing bucket
        int32_t n_in = 0;
        for (int32_t j = 0; j < n; ++j)
            if (e[j] > 0.0f && bucket_of(mx, row[id_at(j)]) == cross) in[n_in++] = j;
        std::sort(in, in + n_in, [&](int32_t a, int32_t b) {
            const float va = row[id_at(a)], vb = row[id_at(b)];
            return va > vb || (va == vb && id_at(a) < id_at(b));
        });
        double cum = before;
        int32_t n_keep = 0;
        while (n_keep < n_in && cum < target) cum += e[in[n_keep++]];
        const float ninf = -std::numeric_limits<float>::infinity();
        for (int32_t j = n_keep; j < n_in; ++j) e[in[j]] = 0.0f;  // dropped from the crossing bucket
        int32_t n_out = 0;
        for (int32_t j = 0; j < n; ++j) {
            const int32_t id = id_at(j);
            if (e[j] == 0.0f || bucket_of(mx, row[id]) > cross) row[id] = ninf; else cand[n_out++] = id;
        }
        ws.n_candidates = n_out;
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
