#include "sample/logprobs.h"

#include "base/error.h"
#include "sample/vec-math.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace tmill {

double log_sum_exp(const float * row, int32_t n) {
    const float mx = row_max(row, n);
    if (mx == -std::numeric_limits<float>::infinity()) return -std::numeric_limits<double>::infinity();
    return (double)mx + std::log(sum_exp(row, n, mx, nullptr));
}

int32_t logprob_rank(const float * row, int32_t n, int32_t token) {
    return count_at_least(row, n, row[token]);
}

// NOTE(logprobs): small N (the common ≤ 20) keeps a sorted insertion buffer, so most tokens cost one
// comparison; large N (up to the whole vocabulary) partially sorts an index buffer instead.
void top_logprobs(const float * row, int32_t n, double lse, int32_t n_top, token_logprob * out, sampler_workspace & ws) {
    if (n_top <= 0) return;
    if (n_top <= 64) {
        int32_t filled = 0;
        for (int32_t i = 0; i < n; ++i) {
            const float v = row[i];
            if (filled == n_top && !(v > out[filled - 1].logprob)) continue;
            int32_t j = filled < n_top ? filled++ : n_top - 1;
            while (j > 0 && out[j - 1].logprob < v) {
                out[j] = out[j - 1];
                --j;
            }
            out[j].token = i;
            out[j].logprob = v;
        }
    } else {
        int32_t * idx = ws.index.data();  // (n_vocab) token ids, the first n_top sorted largest first
        std::iota(idx, idx + n, 0);
        std::partial_sort(idx, idx + n_top, idx + n,
                          [row](int32_t a, int32_t b) { return row[a] > row[b] || (row[a] == row[b] && a < b); });
        for (int32_t j = 0; j < n_top; ++j) out[j] = {idx[j], row[idx[j]], 0};
    }
    for (int32_t j = 0; j < n_top; ++j) {
        out[j].logprob = (float)((double)out[j].logprob - lse);
        out[j].rank = j + 1;
    }
}

token_logprob prompt_logprob(const float * row, int32_t n_vocab, int32_t token, int32_t n_top, token_logprob * top_out,
                             sampler_workspace & ws) {
    TM_CHECK(token >= 0 && token < n_vocab, invalid_argument, "prompt_logprob: token id out of vocabulary");
    TM_CHECK(n_top >= 0 && n_top <= n_vocab, invalid_argument, "prompt_logprob: n_top out of range");
    const double lse = log_sum_exp(row, n_vocab);
    top_logprobs(row, n_vocab, lse, n_top, top_out, ws);
    return {token, (float)((double)row[token] - lse), logprob_rank(row, n_vocab, token)};
}

} // namespace tmill
