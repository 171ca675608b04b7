// NOTE(vocab): built once from metadata and never mutated. Token texts live in one arena string with
// an offset table and a flat text → id index over it. BPE merges are keyed by the pair of token ids,
// with the merge's result token precomputed, so a merge step is one hash probe and never builds a
// string. A merge naming a text that is not a token is rejected (Hugging Face rejects it too). Defaults and special-id
// discovery follow llama.cpp's llama_vocab::load.
#include "tokenizer/vocab.h"

#include <algorithm>
#include <cctype>

#include "base/error.h"
#include "gguf/gguf.h"

namespace tmill::tok {

namespace {

std::string lower(std::string_view s) {
    std::string r(s);
    for (char & c : r) c = char(std::tolower(static_cast<unsigned char>(c)));
    return r;
}

bool contains(const std::string & hay, const char * needle) { return hay.find(needle) != std::string::npos; }

} // namespace

std::shared_ptr<const vocab> vocab::from_spec(const vocab_spec & spec) {
    std::vector<std::string_view> tokens(spec.tokens.begin(), spec.tokens.end());
    std::vector<std::string_view> merges(spec.merges.begin(), spec.merges.end());
    std::shared_ptr<vocab> v(new vocab());
    v->build(spec, tokens, merges);
    return v;
}

std::shared_ptr<const vocab> vocab::from_gguf(const gguf::file & f) {
    vocab_spec spec;
    const auto model = f.get_string("tokenizer.ggml.model");
    TM_CHECK(model.has_value(), tokenizer, f.path() + ": missing tokenizer.ggml.model");
    spec.model = std::string(*model);
    if (auto pre = f.get_string("tokenizer.ggml.pre")) spec.pre = std::string(*pre);
    if (auto name = f.get_string("general.name")) spec.name = std::string(*name);
    auto tokens = f.get_string_array("tokenizer.ggml.tokens");
    TM_CHECK(tokens.has_value(), tokenizer, f.path() + ": missing tokenizer.ggml.tokens");
    if (auto scores = f.get_f32_array("tokenizer.ggml.scores")) spec.scores = std::move(*scores);
    if (auto types = f.get_i32_array("tokenizer.ggml.token_type")) spec.types = std::move(*types);
    std::vector<std::string_view> merges;
    if (auto m = f.get_string_array("tokenizer.ggml.merges")) merges = std::move(*m);
    else TM_CHECK(spec.model != "gpt2", tokenizer, f.path() + ": missing tokenizer.ggml.merges for a gpt2 (BPE) vocabulary");
    auto id = [&](const char * key, int64_t & out) {
        if (auto v = f.get_i64(key)) out = *v;
    };
    id("tokenizer.ggml.bos_token_id", spec.bos);
    id("tokenizer.ggml.eos_token_id", spec.eos);
    id("tokenizer.ggml.eot_token_id", spec.eot);
    id("tokenizer.ggml.eom_token_id", spec.eom);
    id("tokenizer.ggml.unknown_token_id", spec.unk);
    id("tokenizer.ggml.padding_token_id", spec.pad);
    id("tokenizer.ggml.fim_pre_token_id", spec.fim_pre);
    id("tokenizer.ggml.fim_suf_token_id", spec.fim_suf);
    id("tokenizer.ggml.fim_mid_token_id", spec.fim_mid);
    id("tokenizer.ggml.fim_pad_token_id", spec.fim_pad);
    id("tokenizer.ggml.fim_rep_token_id", spec.fim_rep);
    id("tokenizer.ggml.fim_sep_token_id", spec.fim_sep);
    // Deprecated names, read after the new ones as llama.cpp does (so they win when both are present).
    id("tokenizer.ggml.prefix_token_id", spec.fim_pre);
    id("tokenizer.ggml.suffix_token_id", spec.fim_suf);
    id("tokenizer.ggml.middle_token_id", spec.fim_mid);
    auto flag = [&](const char * key, int & out) {
        if (auto v = f.get_bool(key)) out = *v ? 1 : 0;
    };
    flag("tokenizer.ggml.add_bos_token", spec.add_bos);
    flag("tokenizer.ggml.add_eos_token", spec.add_eos);
    flag("tokenizer.ggml.add_space_prefix", spec.add_space_prefix);
    std::shared_ptr<vocab> v(new vocab());
    try {
        v->build(spec, *tokens, merges);
    } catch (const tmill::error & e) {
        throw tmill::error(e.code(), f.path() + ": " + e.what());
    }
    return v;
}

void vocab::build(const vocab_spec & spec, const std::vector<std::string_view> & tokens,
                  const std::vector<std::string_view> & merges) {
    if (spec.model == "llama") {
        type_ = vocab_type::spm;
    } else if (spec.model == "gpt2") {
        type_ = vocab_type::bpe;
    } else {
        throw tmill::error(error_code::tokenizer, "unsupported tokenizer model '" + spec.model +
                        "' (supported: llama, gpt2)");
    }
    const size_t n = tokens.size();
    TM_CHECK(n > 0, tokenizer, "the vocabulary has no tokens");
    TM_CHECK(n < (size_t(1) << 31), tokenizer, "the vocabulary is too large");
    TM_CHECK(spec.scores.empty() || spec.scores.size() == n, tokenizer,
             "tokenizer.ggml.scores has " + std::to_string(spec.scores.size()) + " entries for " + std::to_string(n) + " tokens");
    TM_CHECK(spec.types.empty() || spec.types.size() == n, tokenizer,
             "tokenizer.ggml.token_type has " + std::to_string(spec.types.size()) + " entries for " + std::to_string(n) + " tokens");

    // Token texts and the text → id map.
    size_t total = 0;
    for (auto t : tokens) total += t.size();
    TM_CHECK(total < (size_t(1) << 32), tokenizer, "token texts are too large");
    text_.reserve(total);
    offsets_.resize(n + 1);
    for (size_t i = 0; i < n; ++i) {
        offsets_[i] = uint32_t(text_.size());
        text_.append(tokens[i]);
    }
    offsets_[n] = uint32_t(text_.size());
    scores_ = spec.scores.empty() ? std::vector<float>(n, 0.0f) : spec.scores;
    types_.resize(n);
    for (size_t i = 0; i < n; ++i) {
        const int32_t t = spec.types.empty() ? 1 : spec.types[i];
        TM_CHECK(t >= 0 && t <= 6, tokenizer, "token " + std::to_string(i) + " has unknown token_type " + std::to_string(t));
        types_[i] = token_type(t);
    }
    token_ids_.build(int32_t(n), [this](int32_t id) { return token_text_unchecked(id); });  // last wins, as llama.cpp

    // Pre-tokenizer and type-specific defaults (llama.cpp llama_vocab::load).
    bool default_add_bos = false;
    int64_t def_bos = -1, def_eos = -1, def_unk = -1;
    if (type_ == vocab_type::spm) {
        def_bos = 1; def_eos = 2; def_unk = 0;
        default_add_bos = true;
        add_space_prefix_ = true;
    } else {
        def_bos = 11; def_eos = 11;
        add_space_prefix_ = false;
        if (spec.pre.empty()) {
            pre_ = pre_type::default_;
        } else {
            TM_CHECK(pre_type_from_name(spec.pre, pre_), tokenizer, "unknown pre-tokenizer type '" + spec.pre + "'");
        }
        ignore_merges_ = pre_ == pre_type::llama3;
        default_add_bos = pre_ == pre_type::llama3;
    }
    add_bos_ = spec.add_bos >= 0 ? spec.add_bos == 1 : default_add_bos;
    add_eos_ = spec.add_eos == 1;
    if (spec.add_space_prefix >= 0) add_space_prefix_ = spec.add_space_prefix == 1;

    auto resolve = [&](const char * what, int64_t given, int64_t def) -> int32_t {
        if (given == -2) return (def >= 0 && def < int64_t(n)) ? int32_t(def) : -1;  // absent: default if it exists
        if (given < 0) return -1;
        // llama.cpp ignores an out-of-range special id (keeping the default); real files store u32 -1
        // (4294967295) for "none", e.g. stories260K's padding id.
        if (given >= int64_t(n)) return (def >= 0 && def < int64_t(n)) ? int32_t(def) : -1;
        (void)what;
        return int32_t(given);
    };
    bos_ = resolve("bos", spec.bos, def_bos);
    eos_ = resolve("eos", spec.eos, def_eos);
    eot_ = resolve("eot", spec.eot, -1);
    eom_ = resolve("eom", spec.eom, -1);
    unk_ = resolve("unknown", spec.unk, def_unk);
    pad_ = resolve("padding", spec.pad, -1);
    fim_pre_ = resolve("fim_pre", spec.fim_pre, -1);
    fim_suf_ = resolve("fim_suf", spec.fim_suf, -1);
    fim_mid_ = resolve("fim_mid", spec.fim_mid, -1);
    fim_pad_ = resolve("fim_pad", spec.fim_pad, -1);
    fim_rep_ = resolve("fim_rep", spec.fim_rep, -1);
    fim_sep_ = resolve("fim_sep", spec.fim_sep, -1);
    TM_CHECK(!add_bos_ || bos_ >= 0, tokenizer, "add_bos_token is set but there is no BOS token");
    TM_CHECK(!add_eos_ || eos_ >= 0, tokenizer, "add_eos_token is set but there is no EOS token");

    if (type_ == vocab_type::spm) {
        spm_space_bounded_ = true;
        for (size_t i = 0; i < n && spm_space_bounded_; ++i) {
            const std::string_view t = token_text_unchecked(int32_t(i));
            for (size_t p = t.find("\xE2\x96\x81", 1); p != std::string_view::npos; p = t.find("\xE2\x96\x81", p + 1)) {
                if (p < 3 || t.compare(p - 3, 3, "\xE2\x96\x81") != 0) { spm_space_bounded_ = false; break; }
            }
        }
    }

    // SPM byte fallback tokens.
    static const char * hex = "0123456789ABCDEF";
    for (int b = 0; b < 256; ++b) {
        const char name[6] = {'<', '0', 'x', hex[b >> 4], hex[b & 15], '>'};
        int32_t id = text_to_token(std::string_view(name, 6));
        if (id < 0) {
            const char c = char(b);
            id = text_to_token(std::string_view(&c, 1));
        }
        byte_tokens_[b] = id;
    }

    // BPE merges.
    if (type_ == vocab_type::bpe) {
        // Hashes first, then lookups with the slots prefetched a few merges ahead: the tables are
        // far larger than the caches, so this is bound by memory latency.
        const size_t nm = merges.size();
        std::vector<std::string_view> left(nm), right(nm);
        std::vector<uint64_t> hashes(nm * 3);  // (nm, 3) left, right, concatenation
        std::string concat;
        for (size_t r = 0; r < nm; ++r) {
            const auto m = merges[r];
            const size_t sp = m.size() > 1 ? m.find(' ', 1) : std::string_view::npos;
            TM_CHECK(sp != std::string_view::npos, tokenizer, "merge " + std::to_string(r) + " '" + std::string(m) + "' has no separator");
            left[r] = m.substr(0, sp);
            right[r] = m.substr(sp + 1);
            concat.assign(left[r]).append(right[r]);
            hashes[r * 3 + 0] = hash_bytes(left[r]);
            hashes[r * 3 + 1] = hash_bytes(right[r]);
            hashes[r * 3 + 2] = hash_bytes(concat);
        }
        const auto text_of = [this](int32_t id) { return token_text_unchecked(id); };
        constexpr size_t ahead = 16;
        std::vector<int32_t> ids(nm * 3);  // (nm, 3)
        for (size_t r = 0; r < nm; ++r) {
            if (r + ahead < nm) for (int k = 0; k < 3; ++k) token_ids_.prefetch(hashes[(r + ahead) * 3 + k]);
            concat.assign(left[r]).append(right[r]);
            ids[r * 3 + 0] = token_ids_.find_hashed(left[r], hashes[r * 3 + 0], text_of);
            ids[r * 3 + 1] = token_ids_.find_hashed(right[r], hashes[r * 3 + 1], text_of);
            ids[r * 3 + 2] = token_ids_.find_hashed(concat, hashes[r * 3 + 2], text_of);
            TM_CHECK(ids[r * 3] >= 0 && ids[r * 3 + 1] >= 0, tokenizer, "merge " + std::to_string(r) + " '" +
                     std::string(merges[r]) + "' references a text that is not a token");
        }
        merges_.reserve(nm);
        for (size_t r = 0; r < nm; ++r) {
            if (r + ahead < nm) merges_.prefetch(ids[(r + ahead) * 3], ids[(r + ahead) * 3 + 1]);
            merges_.insert(ids[r * 3], ids[r * 3 + 1], int32_t(r), ids[r * 3 + 2]);
        }
    }

    // Special ids found by text, with their type overrides, and the end-of-generation set: before the
    // added-token list, which must see the overridden types.
    detect_special_tokens();

    // Token strip flags (llama.cpp sets them by model name).
    strip_.assign(n, 0);
    const std::string lname = lower(spec.name);
    for (size_t i = 0; i < n; ++i) {
        if (is_added(int32_t(i))) added_sorted_.push_back(int32_t(i));
    }
    if (contains(lname, "phi-3") || contains(lname, "phi3")) {
        for (int32_t id : added_sorted_) strip_[size_t(id)] |= 2;
        auto set_r = [&](const char * t, bool on) {
            const int32_t id = text_to_token(t);
            if (id >= 0) strip_[size_t(id)] = on ? uint8_t(strip_[size_t(id)] | 2) : uint8_t(strip_[size_t(id)] & ~2);
        };
        set_r("</s>", true);
        set_r("<unk>", false);
        set_r("<s>", false);
        set_r("<|endoftext|>", false);
    }
    std::stable_sort(added_sorted_.begin(), added_sorted_.end(), [&](int32_t a, int32_t b) {
        return token_text(a).size() > token_text(b).size();
    });
}

bool vocab::is_eog(int32_t id) const { return std::binary_search(eog_.begin(), eog_.end(), id); }

std::string_view vocab::token_text(int32_t id) const {
    TM_CHECK(valid(id), invalid_argument, "token id " + std::to_string(id) + " is out of range");
    return std::string_view(text_.data() + offsets_[size_t(id)], offsets_[size_t(id) + 1] - offsets_[size_t(id)]);
}

token_type vocab::get_type(int32_t id) const {
    TM_CHECK(valid(id), invalid_argument, "token id " + std::to_string(id) + " is out of range");
    return types_[size_t(id)];
}

bool vocab::is_special(int32_t id) const {
    const token_type t = get_type(id);
    return t == token_type::control || t == token_type::unknown;
}

bool vocab::is_added(int32_t id) const {
    const token_type t = get_type(id);
    return t == token_type::control || t == token_type::unknown || t == token_type::user_defined;
}

int32_t vocab::text_to_token(std::string_view text) const {
    return token_ids_.find(text, [this](int32_t id) { return token_text_unchecked(id); });
}

int32_t vocab::byte_to_token(uint8_t b) const { return byte_tokens_[b]; }

bool vocab::find_merge(int32_t l, int32_t r, int32_t & rank, int32_t & result) const {
    return merges_.find(l, r, rank, result);
}

} // namespace tmill::tok
