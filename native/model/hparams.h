// Hyper-parameters of a llama-family model, read from GGUF metadata (`<arch>.*` keys) and validated.
#pragma once

#include <cstdint>
#include <string>

#include "gguf/gguf.h"

namespace tmill {

enum class model_arch { llama, qwen2, qwen3 };
enum class rope_style { normal, neox };   // normal: rotate adjacent pairs; neox: rotate halves
enum class rope_scaling { none, linear, yarn };

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
};

// Reads and validates the hyper-parameters. Throws tmill::error (gguf_unsupported for an architecture we
// do not run, gguf_invalid for missing or inconsistent values), naming the file and the key.
hparams hparams_load(const gguf::file & file);

const char * model_arch_name(model_arch arch);

} // namespace tmill
