// NOTE(special-tokens): llama.cpp (the version node-llama-cpp 3.22.1 bundles) finds special ids the
// GGUF does not name by their token text, and every token it picks that way is forced to CONTROL
// ("control-looking token ... was not control-type", a warning there): it is then matched only with
// parse_special and dropped by skip_special_tokens. The end-of-generation set is every token whose
// text is in a fixed list (forced to CONTROL too, whatever its stored type, and whether or not it is
// already a named special id), plus the FIM pad/repo/sep ids, plus eos/eot/eom; two model-specific
// exceptions then take "<|end|>" (harmony/solar-open) or "</s>" (gemma4/paddleocr) back out.
// llama.cpp scans an unordered_map, so when several candidate texts for one auto-detected id exist its
// choice follows hash order; we take the first candidate in list order (the shared vocabs have at most
// one candidate per FIM id, and every eot candidate is also an end-of-generation text).
// llama.cpp keeps token attributes as bit sets (NORMAL|CONTROL, ...); every use of an attribute that the
// tokenizer and detokenizer make tests CONTROL first, so replacing the type by `control` is equivalent.
#include "tokenizer/vocab.h"

#include <algorithm>

namespace tmill::tok {

namespace {

const char * const k_eot_texts[] = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>", "<EOT>", "_<EOT>",
    "[EOT]", "<\xEF\xBD\x9C" "end\xE2\x96\x81" "of\xE2\x96\x81" "sentence\xEF\xBD\x9C>", "<end_of_utterance>",
};
const char * const k_eom_texts[] = {"<|eom_id|>"};
const char * const k_fim_pre_texts[] = {
    "<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<\xEF\xBD\x9C" "fim\xE2\x96\x81" "begin\xEF\xBD\x9C>", "<PRE>",
    "\xE2\x96\x81<PRE>", "<|code_prefix|>", "<|prefix|>",
};
const char * const k_fim_suf_texts[] = {
    "<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<\xEF\xBD\x9C" "fim\xE2\x96\x81" "hole\xEF\xBD\x9C>", "<SUF>",
    "\xE2\x96\x81<SUF>", "<|code_suffix|>", "<|suffix|>",
};
const char * const k_fim_mid_texts[] = {
    "<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<\xEF\xBD\x9C" "fim\xE2\x96\x81" "end\xEF\xBD\x9C>", "<MID>",
    "\xE2\x96\x81<MID>", "<|code_middle|>", "<|middle|>",
};
const char * const k_fim_pad_texts[] = {"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"};
const char * const k_fim_rep_texts[] = {"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"};
const char * const k_fim_sep_texts[] = {"<|file_sep|>"};

// Texts that end generation, whatever their ids.
const char * const k_eog_texts[] = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>", "<end_of_turn>",
    "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]", "<|end_of_text|>",
    "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>",
    "<\xEF\xBD\x9C" "end\xE2\x96\x81" "of\xE2\x96\x81" "sentence\xEF\xBD\x9C>", "[e~[",
};

// gpt-oss's structural tokens are always rendered: llama.cpp makes them USER_DEFINED.
const char * const k_always_rendered_texts[] = {"<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"};

} // namespace

void vocab::detect_special_tokens() {
    auto force_control = [&](int32_t id) { types_[size_t(id)] = token_type::control; };
    // Sets `slot` (when unset) to the first candidate text present and makes that token CONTROL.
    auto detect = [&](int32_t & slot, const char * const * texts, size_t n_texts) {
        if (slot >= 0) return;
        for (size_t i = 0; i < n_texts; ++i) {
            const int32_t id = text_to_token(texts[i]);
            if (id < 0) continue;
            slot = id;
            force_control(id);
            return;
        }
    };
#define TM_DETECT(slot, texts) detect(slot, texts, sizeof(texts) / sizeof(texts[0]))
    TM_DETECT(eot_, k_eot_texts);
    TM_DETECT(eom_, k_eom_texts);
    TM_DETECT(fim_pre_, k_fim_pre_texts);
    TM_DETECT(fim_suf_, k_fim_suf_texts);
    TM_DETECT(fim_mid_, k_fim_mid_texts);
    TM_DETECT(fim_pad_, k_fim_pad_texts);
    TM_DETECT(fim_rep_, k_fim_rep_texts);
    TM_DETECT(fim_sep_, k_fim_sep_texts);
#undef TM_DETECT

    eog_.clear();
    for (int32_t id : {fim_pad_, fim_rep_, fim_sep_}) if (id >= 0) eog_.push_back(id);
    for (const char * t : k_eog_texts) {
        const int32_t id = text_to_token(t);
        if (id < 0) continue;
        eog_.push_back(id);
        force_control(id);
    }
    for (const char * t : k_always_rendered_texts) {
        const int32_t id = text_to_token(t);
        if (id >= 0) types_[size_t(id)] = token_type::user_defined;
    }
    for (int32_t id : {eos_, eot_, eom_}) if (id >= 0) eog_.push_back(id);
    std::sort(eog_.begin(), eog_.end());
    eog_.erase(std::unique(eog_.begin(), eog_.end()), eog_.end());

    auto eog_with_text = [&](std::string_view text) -> int32_t {
        for (int32_t id : eog_) if (token_text_unchecked(id) == text) return id;
        return -1;
    };
    auto drop_eog = [&](int32_t id, token_type now) {
        eog_.erase(std::find(eog_.begin(), eog_.end(), id));
        types_[size_t(id)] = now;
    };
    // Harmony (gpt-oss) and solar-open: "<|end|>" ends a message, not the generation.
    const bool has_return = eog_with_text("<|return|>") >= 0;
    const bool has_call = eog_with_text("<|call|>") >= 0 || eog_with_text("<|calls|>") >= 0;
    const bool has_flush = eog_with_text("<|flush|>") >= 0;
    const int32_t end_id = eog_with_text("<|end|>");
    if (end_id >= 0 && has_call && (has_return || has_flush)) drop_eog(end_id, token_type::user_defined);
    // Gemma 4 and PaddleOCR: "</s>" is ordinary text there.
    const int32_t s_id = eog_with_text("</s>");
    if (s_id >= 0 && eog_with_text("<|tool_response>") >= 0) drop_eog(s_id, token_type::normal);
}

} // namespace tmill::tok
