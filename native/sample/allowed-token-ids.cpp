// allowed_token_ids: every token not in the list gets -inf.
#include "sample/processors.h"

#include "base/error.h"

#include <algorithm>
#include <limits>

namespace tmill {

namespace {

class allowed_token_ids_processor final : public logits_processor {
public:
    explicit allowed_token_ids_processor(std::vector<int32_t> ids) : ids_(std::move(ids)), saved_(ids_.size()) {}
    const char * name() const override { return "allowed_token_ids"; }
    processor_stage stage() const override { return processor_stage::mask; }
    bool argmax_invariant() const override { return false; }
    void apply(float * row, const token_history &, sampler_workspace & ws) override {
        for (size_t i = 0; i < ids_.size(); ++i) saved_[i] = row[ids_[i]];
        std::fill(row, row + ws.n_vocab, -std::numeric_limits<float>::infinity());
        for (size_t i = 0; i < ids_.size(); ++i) row[ids_[i]] = saved_[i];
    }

private:
    std::vector<int32_t> ids_;   // (n_allowed) distinct, in vocab
    std::vector<float> saved_;   // (n_allowed) their logits while the row is cleared
};

} // namespace

processor_ptr make_allowed_token_ids(const sampling_params & p, const request_shape & shape) {
    if (!p.allowed_token_ids) return nullptr;
    const auto & ids = *p.allowed_token_ids;
    TM_CHECK(!ids.empty(), invalid_argument, "allowed_token_ids is not None and empty!");
    for (int32_t id : ids)
        TM_CHECK(id >= 0 && id < shape.n_vocab, invalid_argument, "allowed_token_ids contains out-of-vocab token id!");
    std::vector<int32_t> uniq(ids);
    std::sort(uniq.begin(), uniq.end());
    uniq.erase(std::unique(uniq.begin(), uniq.end()), uniq.end());
    return std::make_unique<allowed_token_ids_processor>(std::move(uniq));
}

} // namespace tmill
