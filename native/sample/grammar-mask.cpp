// grammar_mask: grammar-constrained decoding. Every token whose bytes cannot continue the text as a
// prefix of the grammar's language gets -inf; EOS keeps its logit only where the text may end.
#include "sample/processors.h"

#include "base/error.h"
#include "grammar/matcher.h"
#include "tokenizer/detokenizer.h"

#include <algorithm>
#include <limits>
#include <string>
#include <string_view>

namespace tmill {

namespace {

// NOTE(grammar-mask): one processor (and so one matcher) per choice, built at admission; the engine
// thread is its only user. The matcher advances in accept() with the token the sampler chose, so the
// state always equals the sequence's output — a preempted sequence keeps its sampler and resumes with
// the same state, since recompute re-evaluates tokens without sampling them again. Not
// argmax-invariant: greedy requests keep it.
// If the grammar leaves no token and cannot end (a character no token can spell), or following it
// would pass k_max_stacks, only EOS is allowed from then on and failure() says why: the engine ends the
// sequence with an error (code grammar_invalid) instead of leaving the grammar or growing without bound.
// With a trigger (sampling_params::grammar_after) the processor starts dormant: it masks nothing and only
// watches the output's bytes; once they contain the trigger, the bytes after it are the grammar's first
// text and masking starts with the next token. The watch window keeps the last trigger.size() - 1 bytes,
// so a trigger split across tokens is found and the window never grows.
class grammar_mask_processor final : public logits_processor {
public:
    grammar_mask_processor(std::shared_ptr<const grammar::compiled_grammar> g, std::vector<int32_t> eos, int32_t n_vocab,
                           std::string trigger)
        : vocab_(g->vocab), matcher_(std::move(g)), eos_(std::move(eos)), allowed_(size_t(n_vocab), 0), saved_(eos_.size()),
          trigger_(std::move(trigger)), dormant_(!trigger_.empty()) {
        window_.reserve(trigger_.size() + 256);
    }

    const char * name() const override { return "grammar"; }
    processor_stage stage() const override { return processor_stage::mask; }
    bool argmax_invariant() const override { return false; }

    void apply(float * row, const token_history &, sampler_workspace & ws) override {
        if (dormant_) return;
        for (size_t k = 0; k < eos_.size(); ++k) saved_[k] = row[eos_[k]];
        const int32_t n_allowed = matcher_.fill_mask(allowed_.data());
        const bool can_end = matcher_.can_end();
        if (failure_ == nullptr) {
            if (matcher_.overflowed() || matcher_.mask_overflowed()) {
                failure_ = "grammar: too ambiguous to follow (more than 2048 parse stacks, or rules nested more than 4096 deep)";
            } else if (n_allowed == 0 && !can_end) {
                failure_ = "grammar: no token of the vocabulary can continue the text";
            }
        }
        const float ninf = -std::numeric_limits<float>::infinity();
        if (failure_ != nullptr) {
            std::fill(row, row + ws.n_vocab, ninf);   // only EOS: the engine ends the sequence with the failure
        } else {
            const uint8_t * a = allowed_.data();
            for (int32_t i = 0; i < ws.n_vocab; ++i) row[i] = a[i] ? row[i] : ninf;
        }
        if (can_end || failure_ != nullptr) {
            for (size_t k = 0; k < eos_.size(); ++k) row[eos_[k]] = saved_[k];
        }
    }

    void accept(int32_t token) override {
        if (std::find(eos_.begin(), eos_.end(), token) != eos_.end()) return;
        if (dormant_) {
            watch(token);
            return;
        }
        if (!matcher_.accept_token(token) && failure_ == nullptr) failure_ = "grammar: the sampled token does not continue the text";
    }

    const char * failure() const override { return failure_; }

    // The output continues text (the prompt's): the SPM first-space rule does not apply.
    void continue_text() { matcher_.start_mid_text(); }

private:
    void watch(int32_t token) {
        vocab_->append_piece(token, window_);
        const size_t at = window_.find(trigger_);
        if (at == std::string::npos) {
            const size_t keep = trigger_.size() - 1;
            if (window_.size() > keep) window_.erase(0, window_.size() - keep);
            return;
        }
        dormant_ = false;
        matcher_.start_mid_text();
        const std::string_view rest = std::string_view(window_).substr(at + trigger_.size());
        if (!rest.empty() && !matcher_.accept_bytes(rest)) failure_ = "grammar: the text after the trigger does not follow the grammar";
        window_.clear();
    }

    std::shared_ptr<const tok::vocab> vocab_;
    grammar::matcher matcher_;
    std::vector<int32_t> eos_;       // (n_eos) end-of-generation ids, allowed when the grammar can end
    std::vector<uint8_t> allowed_;   // (n_vocab) this step's mask; tokens past the vocab stay 0
    std::vector<float> saved_;       // (n_eos) EOS logits while the row is masked
    const char * failure_ = nullptr; // why this sequence cannot follow the grammar any more
    std::string trigger_;            // grammar_after; empty = active from the first token
    bool dormant_;                   // the trigger has not appeared in the output yet
    std::string window_;             // (< trigger + one piece) the output's last bytes while dormant
};

} // namespace

processor_ptr make_grammar_mask(const sampling_params & p, const request_shape & shape) {
    if (!p.grammar) return nullptr;
    TM_CHECK(p.grammar->trie != nullptr, invalid_argument, "the grammar was compiled without a model");
    TM_CHECK(p.grammar->trie->n_vocab() <= shape.n_vocab, invalid_argument,
             "the grammar was compiled for a different model (vocabulary size " + std::to_string(p.grammar->trie->n_vocab()) +
                 ", this model's logits have " + std::to_string(shape.n_vocab) + ")");
    std::vector<int32_t> eos;
    for (int32_t id : p.eos_token_ids) {
        if (id >= 0 && id < shape.n_vocab && std::find(eos.begin(), eos.end(), id) == eos.end()) eos.push_back(id);
    }
    auto processor = std::make_unique<grammar_mask_processor>(p.grammar, std::move(eos), shape.n_vocab, p.grammar_after);
    // The detokenizer keeps the first piece's leading space after a prompt holding text; so does the grammar.
    if (shape.prompt != nullptr && tok::holds_text(*p.grammar->vocab, shape.prompt, size_t(shape.n_prompt))) processor->continue_text();
    return processor;
}

} // namespace tmill
