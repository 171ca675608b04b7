// min_p / top_k / top_p, alone and chained (the chained ones take the sparse candidate paths),
// against a naive full-sort reference on random rows of a large vocabulary.
#include "check.h"
#include "sample-test-util.h"

#include "sample/processors.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

using namespace tm_test::sample_util;

namespace {

// The reference: plain softmax and a full sort, written for clarity, not speed.
void reference(std::vector<float> & row, float min_p, int32_t top_k, float top_p) {
    const int32_t n = (int32_t)row.size();
    auto probs = [&] {
        double mx = -INFINITY, z = 0;
        for (float v : row) mx = std::max(mx, (double)v);
        std::vector<double> p(n);
        for (int32_t i = 0; i < n; ++i) z += (p[i] = std::exp((double)row[i] - mx));
        for (auto & x : p) x /= z;
        return p;
    };
    if (min_p > 0) {
        auto p = probs();
        const double top = *std::max_element(p.begin(), p.end());
        for (int32_t i = 0; i < n; ++i) if (p[i] < min_p * top) row[i] = ninf;
    }
    if (top_k > 0 && top_k < n) {
        std::vector<float> s(row);
        std::sort(s.begin(), s.end(), std::greater<float>());
        for (auto & v : row) if (v < s[top_k - 1]) v = ninf;
    }
    if (top_p < 1) {
        auto p = probs();
        std::vector<int32_t> order(n);
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return row[a] > row[b]; });
        double before = 0;
        for (int32_t id : order) {
            if (before >= top_p) row[id] = ninf;
            before += p[id];
        }
    }
}

} // namespace

TM_TEST("sample: truncations match a full-sort reference (dense and sparse paths)") {
    const int32_t n = 20000;
    std::mt19937 gen(42);
    struct combo { float min_p; int32_t top_k; float top_p; };
    const combo combos[] = {{0, 0, 0.9f},   {0, 0, 0.3f},   {0, 40, 1.0f},  {0, 5000, 1.0f}, {0.05f, 0, 1.0f},
                            {0, 50, 0.9f},  {0.01f, 0, 0.8f}, {0.001f, 300, 0.95f}, {0, 6000, 0.5f}};
    int mismatches = 0, cases = 0;
    for (const combo & c : combos) {
        for (float spread : {0.5f, 2.0f, 6.0f}) {
            std::normal_distribution<float> nd(0.0f, spread);
            std::vector<float> row(n);
            for (auto & v : row) v = nd(gen);
            for (int32_t i = 0; i < n; i += 97) row[i] = ninf;  // already-masked tokens
            std::vector<float> expect(row);
            reference(expect, c.min_p, c.top_k, c.top_p);

            tmill::sampling_params p;
            p.min_p = c.min_p;
            p.top_k = c.top_k;
            p.top_p = c.top_p;
            const tmill::request_shape shape = shape_of(n);
            tmill::sampler_workspace ws(n);
            ws.n_candidates = -1;
            for (auto make : {tmill::make_min_p, tmill::make_top_k, tmill::make_top_p}) {
                tmill::processor_ptr proc = make(p, shape);
                if (proc) proc->apply(row.data(), history_of({}, {}), ws);
            }
            ++cases;
            int32_t n_finite = 0;
            for (int32_t i = 0; i < n; ++i) {
                n_finite += row[i] != ninf;
                if ((row[i] == ninf) != (expect[i] == ninf)) ++mismatches;
            }
            if (ws.n_candidates >= 0) CHECK_EQ(ws.n_candidates, n_finite);  // the list is exact
        }
    }
    CHECK_EQ(cases, 27);
    CHECK_EQ(mismatches, 0);
}
