// The vocabulary of a model, read from GGUF metadata: token texts, scores, types, BPE merges, special
// ids and flags. Immutable once built and shared between threads; every tokenize/detokenize call keeps
// its working state on its own stack (H7), so concurrent calls need no locks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/hash-index.h"
#include "tokenizer/pre-tokenizer.h"

namespace tmill::gguf { class file; }

namespace tmill::tok {

enum class vocab_type { spm, bpe };  // tokenizer.ggml.model "llama" | "gpt2"

// tokenizer.ggml.token_type values (llama.cpp's llama_token_type).
enum class token_type : int32_t {
    undefined = 0, normal = 1, unknown = 2, control = 3, user_defined = 4, unused = 5, byte = 6,
};

struct detok_options {
    bool skip_special_tokens = true;            // drop CONTROL/UNKNOWN tokens (vLLM default)
    // Accepted for vLLM parity; inserts nothing, as vLLM's fast detokenizer (see detokenizer.cpp).
    bool spaces_between_special_tokens = true;
};

// Raw metadata for building a vocab without a GGUF file (tests, synthetic vocabs).
struct vocab_spec {
    std::string model = "llama";        // "llama" (SPM) or "gpt2" (byte-level BPE)
    std::string pre;                    // tokenizer.ggml.pre; empty = llama.cpp's default
    std::string name;                   // general.name (lower-cased rules: phi-3 token strip flags)
    std::vector<std::string> tokens;
    std::vector<float> scores;          // empty = all 0
    std::vector<int32_t> types;         // empty = all normal
    std::vector<std::string> merges;    // "left right"
    int64_t bos = -2, eos = -2, eot = -2, eom = -2, unk = -2, pad = -2;  // -2 = absent; -1 = none
    // Fill-in-the-middle ids (tokenizer.ggml.fim_{pre,suf,mid,pad,rep,sep}_token_id), same encoding.
    int64_t fim_pre = -2, fim_suf = -2, fim_mid = -2, fim_pad = -2, fim_rep = -2, fim_sep = -2;
    int add_bos = -1, add_eos = -1, add_space_prefix = -1;  // -1 = absent
};

class vocab {
public:
    static std::shared_ptr<const vocab> from_gguf(const gguf::file & f);  // throws tmill::error(tokenizer)
    static std::shared_ptr<const vocab> from_spec(const vocab_spec & spec);  // throws tmill::error(tokenizer)

    // Text → ids. add_special: BOS/EOS per the GGUF flags. parse_special: CONTROL tokens written in the
    // text become single tokens (USER_DEFINED tokens always do, as in llama.cpp).
    std::vector<int32_t> tokenize(std::string_view text, bool add_special, bool parse_special) const;
    void tokenize(std::string_view text, bool add_special, bool parse_special, std::vector<int32_t> & out) const;

    // Ids → text (invalid UTF-8 replaced by U+FFFD). Equal to the concatenation of an
    // incremental_detokenizer's deltas over the same ids. Precondition: every id in range (checked).
    std::string detokenize(const int32_t * ids, size_t n, const detok_options & opt) const;

    // The text of one token as it appears in output: " there" not "▁there"; the raw byte for byte
    // tokens (may be invalid UTF-8 on its own); special tokens as written. Precondition: id in range.
    std::string token_to_piece(int32_t id) const;
    // Appends the bytes token `id` contributes to decoded text (no special-token filtering).
    void append_piece(int32_t id, std::string & out) const;

    vocab_type type() const { return type_; }
    pre_type pre() const { return pre_; }
    int32_t n_tokens() const { return int32_t(offsets_.size() - 1); }
    int32_t bos() const { return bos_; }
    int32_t eos() const { return eos_; }
    int32_t eot() const { return eot_; }
    int32_t eom() const { return eom_; }
    int32_t unk() const { return unk_; }
    int32_t pad() const { return pad_; }
    int32_t fim_pre() const { return fim_pre_; }
    int32_t fim_suf() const { return fim_suf_; }
    int32_t fim_mid() const { return fim_mid_; }
    int32_t fim_pad() const { return fim_pad_; }
    int32_t fim_rep() const { return fim_rep_; }
    int32_t fim_sep() const { return fim_sep_; }
    const std::vector<int32_t> & eog_ids() const { return eog_; }  // end-of-generation ids, sorted
    bool is_eog(int32_t id) const;
    bool add_bos() const { return add_bos_; }
    bool add_eos() const { return add_eos_; }
    bool add_space_prefix() const { return add_space_prefix_; }
    bool ignore_merges() const { return ignore_merges_; }
    // SPM: no token has "▁" right after another character, so merges never cross a word start.
    bool spm_space_bounded() const { return spm_space_bounded_; }

    std::string_view token_text(int32_t id) const;  // the raw vocab text ("▁there", "Ġthere")
    token_type get_type(int32_t id) const;
    float score(int32_t id) const { return scores_[size_t(id)]; }
    bool is_special(int32_t id) const;  // CONTROL or UNKNOWN: skipped by skip_special_tokens
    bool is_added(int32_t id) const;    // CONTROL, UNKNOWN or USER_DEFINED: matched before splitting
    bool valid(int32_t id) const { return id >= 0 && id < n_tokens(); }

    // Tokenizer internals.
    int32_t text_to_token(std::string_view text) const;  // -1 when absent (last id wins on duplicates)
    int32_t byte_to_token(uint8_t b) const;               // SPM <0xNN> token, -1 when absent
    // BPE: the merge of tokens (l, r): rank and resulting token (-1 when the concatenation is not a
    // token). Returns false when there is no such merge.
    bool find_merge(int32_t l, int32_t r, int32_t & rank, int32_t & result) const;
    bool token_lstrip(int32_t id) const { return (strip_[size_t(id)] & 1) != 0; }
    bool token_rstrip(int32_t id) const { return (strip_[size_t(id)] & 2) != 0; }
    const std::vector<int32_t> & added_tokens_longest_first() const { return added_sorted_; }

private:
    vocab() = default;
    std::string_view token_text_unchecked(int32_t id) const {
        return std::string_view(text_.data() + offsets_[size_t(id)], offsets_[size_t(id) + 1] - offsets_[size_t(id)]);
    }
    void build(const vocab_spec & spec, const std::vector<std::string_view> & tokens,
               const std::vector<std::string_view> & merges);
    // Special ids found by token text, type overrides and the end-of-generation set (special-tokens.cpp).
    void detect_special_tokens();

    vocab_type type_ = vocab_type::spm;
    pre_type pre_ = pre_type::default_;
    std::string text_;                 // all token texts, back to back
    std::vector<uint32_t> offsets_;    // (n_tokens + 1) start of each token's text in text_
    std::vector<float> scores_;        // (n_tokens)
    std::vector<token_type> types_;    // (n_tokens)
    std::vector<uint8_t> strip_;       // (n_tokens) bit 0 lstrip, bit 1 rstrip
    text_index token_ids_;             // text → id over text_
    int32_t byte_tokens_[256];         // SPM byte fallback ids, -1 when absent
    pair_index merges_;                // BPE (left id, right id) → (rank, result id)
    std::vector<int32_t> added_sorted_;  // CONTROL/USER_DEFINED/UNKNOWN ids, longest text first
    std::vector<int32_t> eog_;
    int32_t bos_ = -1, eos_ = -1, eot_ = -1, eom_ = -1, unk_ = -1, pad_ = -1;
    int32_t fim_pre_ = -1, fim_suf_ = -1, fim_mid_ = -1, fim_pad_ = -1, fim_rep_ = -1, fim_sep_ = -1;
    bool add_bos_ = false, add_eos_ = false, add_space_prefix_ = false, ignore_merges_ = false;
    bool spm_space_bounded_ = false;
};

} // namespace tmill::tok
