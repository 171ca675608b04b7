// logit_bias: adds a fixed bias per token id; biases are clamped to [-100, 100] as vLLM does.
#include "sample/processors.h"

#include "base/error.h"
#include "sample/py-format.h"

#include <algorithm>
#include <memory>
#include <vector>

namespace tmill {

namespace {

using bias_list = std::vector<std::pair<int32_t, float>>;

class logit_bias_processor final : public logits_processor {
public:
    explicit logit_bias_processor(std::shared_ptr<const bias_list> bias) : bias_(std::move(bias)) {}
    const char * name() const override { return "logit_bias"; }
    processor_stage stage() const override { return processor_stage::mask; }
    bool argmax_invariant() const override { return false; }
    void apply(float * row, const token_history &, sampler_workspace &) override {
        for (const auto & b : *bias_) row[b.first] += b.second;
    }

private:
    std::shared_ptr<const bias_list> bias_;  // (n_bias) distinct in-vocab ids, clamped biases; shared by a request's choices
};

} // namespace

processor_ptr make_logit_bias(const sampling_params & p, const request_shape & shape, request_shared * shared) {
    if (p.logit_bias.empty()) return nullptr;
    // Every choice of a request has the same list, checked and merged by the first.
    if (shared && shared->logit_bias) return std::make_unique<logit_bias_processor>(shared->logit_bias);
    std::vector<int32_t> bad;
    for (const auto & b : p.logit_bias) {
        if (b.first < 0 || b.first >= shape.n_vocab) bad.push_back(b.first);
    }
    TM_CHECK(bad.empty(), invalid_argument,
             "token_id(s) " + py_int_list(bad) + " in logit_bias contain out-of-vocab token ids. Vocabulary size: " +
                 std::to_string(shape.n_vocab));
    // A repeated id keeps its last value, like a JSON object: a stable sort by id, then the last of each
    // run. (A std::map took 33-54 ms for a whole 262k vocabulary, on the engine thread, per choice; the
    // sort takes ~5 ms, and none when the ids come ascending, as a JSON object's integer keys do.)
    bias_list merged(p.logit_bias);
    const auto by_id = [](const std::pair<int32_t, float> & a, const std::pair<int32_t, float> & b) { return a.first < b.first; };
    if (!std::is_sorted(merged.begin(), merged.end(), by_id)) std::stable_sort(merged.begin(), merged.end(), by_id);
    size_t kept = 0;
    for (size_t i = 0; i < merged.size(); ++i) {
        if (i + 1 < merged.size() && merged[i + 1].first == merged[i].first) continue;
        merged[kept++] = {merged[i].first, std::min(100.0f, std::max(-100.0f, merged[i].second))};
    }
    merged.resize(kept);
    auto list = std::make_shared<const bias_list>(std::move(merged));
    if (shared) shared->logit_bias = list;
    return std::make_unique<logit_bias_processor>(std::move(list));
}

} // namespace tmill
