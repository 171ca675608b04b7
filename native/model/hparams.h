// Hyper-parameters of a llama-family model, read from GGUF metadata (`<arch>.*` keys) and validated.
#pragma once

#include <cstdint>
#include <string>

#include "gguf/gguf.h"

namespace tmill {

enum class model_arch { llama, qwen2, qwen3, gemma2, gemma3, phi3 };
enum class rope_style { normal, neox };   // normal: rotate adjacent pairs; neox: rotate halves
enum class rope_scaling { none, linear, yarn };
enum class ffn_activation { silu, gelu };   // the gated FFN's activation: silu(gate) * up or gelu(gate) * up

struct hparams {
    std::string arch_name;       // general.architecture as written in the file
    model_arch arch = model_arch::llama;
    uint32_t n_ctx_train = 0;    // <arch>.context_length
    uint32_t n_embd = 0;         // <arch>.embedding_length
    uint32_t n_layer = 0;        // <arch>.block_count
    uint32_t n_ff = 0;           // <arch>.feed_forward_length
    uint32_t n_head = 0;         // <arch>.attention.head_count
    uint32_t n_head_kv = 0;      // <arch>.attention.head_count_kv (defaults to n_head)
    uint32_t head_dim = 0;       // <arch>.attention.key_length (defaults to n_embd / n_head)
    uint32_t n_vocab = 0;        // <arch>.vocab_size, else the tokenizer's token count
    float rms_eps = 1e-5f;       // <arch>.attention.layer_norm_rms_epsilon
    uint32_t n_rot = 0;          // <arch>.rope.dimension_count (defaults to head_dim)
    float rope_freq_base = 10000.0f;   // <arch>.rope.freq_base
    float rope_freq_scale = 1.0f;      // 1 / <arch>.rope.scaling.factor for linear scaling
    rope_scaling rope_scaling_type = rope_scaling::none;
    uint32_t rope_orig_ctx = 0;        // <arch>.rope.scaling.original_context_length
    rope_style rope = rope_style::normal;

    // Gemma-style blocks (gemma2, gemma3); the defaults are the llama family's.
    ffn_activation ffn_act = ffn_activation::silu;
    bool post_norms = false;           // an RMS norm after attention and after the FFN, before each residual add
    float embd_scale = 1.0f;           // token embeddings multiplied by this (gemma: sqrt(n_embd))
    float attn_q_scale = 0.0f;         // queries multiplied by this after rope, then attention scale 1; 0: 1/sqrt(head_dim) in attention
    float attn_softcap = 0.0f;         // attention scores s -> c * tanh(s / c) (gemma2); 0: none
    float final_softcap = 0.0f;        // logits z -> c * tanh(z / c) (gemma2); 0: none
    // Interleaved sliding-window attention: layer il is local when swa_pattern > 0 and il % swa_pattern <
    // swa_pattern - 1 (llama.cpp's rule); a local layer's token at position p sees positions p - n_swa + 1 .. p
    // and ropes with the _swa base and scale.
    uint32_t n_swa = 0;                // <arch>.attention.sliding_window; 0: every layer global
    uint32_t swa_pattern = 0;
    float rope_freq_base_swa = 10000.0f;
    float rope_freq_scale_swa = 1.0f;

    bool is_swa(uint32_t il) const { return n_swa > 0 && swa_pattern > 0 && il % swa_pattern < swa_pattern - 1; }
    float rope_base(uint32_t il) const { return is_swa(il) ? rope_freq_base_swa : rope_freq_base; }
    float rope_scale(uint32_t il) const { return is_swa(il) ? rope_freq_scale_swa : rope_freq_scale; }
};

// Reads and validates the hyper-parameters. Throws tmill::error (gguf_unsupported for an architecture we
// do not run, gguf_invalid for missing or inconsistent values), naming the file and the key.
hparams hparams_load(const gguf::file & file);

const char * model_arch_name(model_arch arch);

} // namespace tmill
