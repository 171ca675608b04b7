#include "model/hparams.h"

#include <cmath>

#include "base/error.h"

namespace tmill {

namespace {

struct reader {
    const gguf::file & file;
    const std::string & arch;

    std::string key(const char * suffix) const { return arch + "." + suffix; }

    uint32_t required_u32(const char * suffix) const {
        const std::string k = key(suffix);
        const auto v = file.get_u32(k);
        TM_CHECK(v.has_value(), gguf_invalid, file.path() + ": missing required key '" + k + "'");
        TM_CHECK(*v > 0, gguf_invalid, file.path() + ": key '" + k + "' must be positive, got 0");
        return *v;
    }

    uint32_t optional_u32(const char * suffix, uint32_t fallback) const {
        return file.get_u32(key(suffix)).value_or(fallback);
    }

    float optional_f32(const char * suffix, float fallback) const {
        return file.get_f32(key(suffix)).value_or(fallback);
    }
};

// Gemma 2 and 3, as llama.cpp's loader sets them: GELU-gated FFN, post-attention and post-FFN norms,
// embeddings scaled by sqrt(n_embd), queries pre-scaled by 1/sqrt(head_dim) (1/sqrt(n_embd / n_head) for
// the 27B sizes: 46 layers in gemma2, 62 in gemma3), sliding-window layers (gemma2: every other layer,
// window 4096 unless the file says; gemma3: five local layers to one global, local rope base 10000).
// gemma2 soft-caps attention scores (default 50) and logits (default 30).
void gemma_load(const reader & r, hparams & hp) {
    const bool gemma2 = hp.arch == model_arch::gemma2;
    hp.ffn_act = ffn_activation::gelu;
    hp.post_norms = true;
    hp.embd_scale = std::sqrt(float(hp.n_embd));
    const bool size_27b = hp.n_layer == (gemma2 ? 46u : 62u);
    hp.attn_q_scale = size_27b ? 1.0f / std::sqrt(float(hp.n_embd / hp.n_head)) : 1.0f / std::sqrt(float(hp.head_dim));
    hp.n_swa = r.optional_u32("attention.sliding_window", gemma2 ? 4096u : 0u);
    hp.swa_pattern = gemma2 ? 2 : 6;
    if (gemma2) {
        hp.rope_freq_base_swa = hp.rope_freq_base;
        hp.rope_freq_scale_swa = hp.rope_freq_scale;
        hp.attn_softcap = r.optional_f32("attn_logit_softcapping", 50.0f);
        hp.final_softcap = r.optional_f32("final_logit_softcapping", 30.0f);
        TM_CHECK(hp.attn_softcap >= 0.0f && hp.final_softcap >= 0.0f, gguf_invalid,
                 r.file.path() + ": soft-capping values must not be negative");
    } else {
        hp.rope_freq_base_swa = 10000.0f;
        hp.rope_freq_scale_swa = 1.0f;
    }
}

} // namespace

const char * model_arch_name(model_arch arch) {
    switch (arch) {
        case model_arch::llama: return "llama";
        case model_arch::qwen2: return "qwen2";
        case model_arch::qwen3: return "qwen3";
        case model_arch::gemma2: return "gemma2";
        case model_arch::gemma3: return "gemma3";
        case model_arch::phi3: return "phi3";
    }
    return "llama";
}

hparams hparams_load(const gguf::file & file) {
    hparams hp;
    const auto arch = file.get_string("general.architecture");
    TM_CHECK(arch.has_value(), gguf_invalid, file.path() + ": missing required key 'general.architecture'");
    hp.arch_name = std::string(*arch);
    if (hp.arch_name == "llama") {
        hp.arch = model_arch::llama;
        hp.rope = rope_style::normal;
    } else if (hp.arch_name == "qwen2") {
        hp.arch = model_arch::qwen2;
        hp.rope = rope_style::neox;
    } else if (hp.arch_name == "qwen3") {
        hp.arch = model_arch::qwen3;
        hp.rope = rope_style::neox;
    } else if (hp.arch_name == "gemma2") {
        hp.arch = model_arch::gemma2;
        hp.rope = rope_style::neox;
    } else if (hp.arch_name == "gemma3") {
        hp.arch = model_arch::gemma3;
        hp.rope = rope_style::neox;
    } else if (hp.arch_name == "phi3") {
        hp.arch = model_arch::phi3;
        hp.rope = rope_style::neox;
    } else {
        throw error(error_code::gguf_unsupported, file.path() + ": unsupported architecture '" + hp.arch_name +
                                                      "' (supported: llama, qwen2, qwen3, gemma2, gemma3, phi3)");
    }

    const reader r{file, hp.arch_name};
    hp.n_ctx_train = r.required_u32("context_length");
    hp.n_embd = r.required_u32("embedding_length");
    hp.n_layer = r.required_u32("block_count");
    hp.n_ff = r.required_u32("feed_forward_length");
    hp.n_head = r.required_u32("attention.head_count");
    hp.n_head_kv = r.optional_u32("attention.head_count_kv", hp.n_head);
    TM_CHECK(hp.n_head_kv > 0 && hp.n_head % hp.n_head_kv == 0, gguf_invalid,
             file.path() + ": '" + r.key("attention.head_count") + "' (" + std::to_string(hp.n_head) +
             ") must be a multiple of '" + r.key("attention.head_count_kv") + "' (" + std::to_string(hp.n_head_kv) + ")");
    TM_CHECK(hp.n_embd % hp.n_head == 0 || file.get_u32(r.key("attention.key_length")).has_value(), gguf_invalid,
             file.path() + ": embedding_length " + std::to_string(hp.n_embd) + " is not divisible by head_count " +
             std::to_string(hp.n_head));
    hp.head_dim = r.optional_u32("attention.key_length", hp.n_embd / hp.n_head);
    const uint32_t value_dim = r.optional_u32("attention.value_length", hp.head_dim);
    TM_CHECK(hp.head_dim > 0 && hp.head_dim % 2 == 0 && value_dim == hp.head_dim, gguf_unsupported,
             file.path() + ": head dimension must be even and equal for keys and values (key_length " +
             std::to_string(hp.head_dim) + ", value_length " + std::to_string(value_dim) + ")");
    hp.rms_eps = r.optional_f32("attention.layer_norm_rms_epsilon", 1e-5f);
    TM_CHECK(hp.rms_eps > 0.0f, gguf_invalid, file.path() + ": '" + r.key("attention.layer_norm_rms_epsilon") + "' must be positive");
    hp.n_rot = r.optional_u32("rope.dimension_count", hp.head_dim);
    TM_CHECK(hp.n_rot > 0 && hp.n_rot <= hp.head_dim && hp.n_rot % 2 == 0, gguf_invalid,
             file.path() + ": '" + r.key("rope.dimension_count") + "' must be even and at most the head dimension");
    hp.rope_freq_base = r.optional_f32("rope.freq_base", 10000.0f);
    TM_CHECK(hp.rope_freq_base > 0.0f, gguf_invalid, file.path() + ": '" + r.key("rope.freq_base") + "' must be positive");

    const auto scaling = file.get_string(r.key("rope.scaling.type"));
    float factor = r.optional_f32("rope.scaling.factor", 0.0f);
    if (factor == 0.0f) {
        const float linear = r.optional_f32("rope.scale_linear", 0.0f);  // older files
        if (linear > 0.0f) factor = linear;
    }
    if (scaling && *scaling == "yarn") {
        throw error(error_code::gguf_unsupported, file.path() + ": rope scaling type 'yarn' is not supported yet");
    }
    if ((scaling && *scaling == "linear") || (!scaling && factor > 0.0f && factor != 1.0f)) {
        TM_CHECK(factor > 0.0f, gguf_invalid, file.path() + ": linear rope scaling needs a positive '" + r.key("rope.scaling.factor") + "'");
        hp.rope_scaling_type = rope_scaling::linear;
        hp.rope_freq_scale = 1.0f / factor;
    } else if (scaling && *scaling != "none") {
        throw error(error_code::gguf_unsupported,
                    file.path() + ": unsupported rope scaling type '" + std::string(*scaling) + "'");
    }
    hp.rope_orig_ctx = r.optional_u32("rope.scaling.original_context_length", hp.n_ctx_train);

    if (hp.arch == model_arch::gemma2 || hp.arch == model_arch::gemma3) gemma_load(r, hp);
    // phi3 scales the queries by 1/sqrt(head_dim) after rope and attends with scale 1 (llama.cpp's order). Its
    // attention.sliding_window is ignored, as llama.cpp's loader ignores it for phi3: every layer is global.
    if (hp.arch == model_arch::phi3) hp.attn_q_scale = 1.0f / std::sqrt(float(hp.head_dim));

    const auto tokens = file.get_string_array("tokenizer.ggml.tokens");
    hp.n_vocab = r.optional_u32("vocab_size", tokens ? uint32_t(tokens->size()) : 0);
    TM_CHECK(hp.n_vocab > 0, gguf_invalid, file.path() + ": cannot determine the vocabulary size (no '" +
             r.key("vocab_size") + "' and no 'tokenizer.ggml.tokens')");
    return hp;
}

} // namespace tmill
