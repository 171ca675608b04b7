// Typed views of a llama-family model's tensors inside the read-only GGUF mapping (llama.cpp's tensor
// names). Every tensor's type and shape is checked against the hyper-parameters when the views are built.
#pragma once

#include <cstdint>
#include <vector>

#include "base/byte-range.h"
#include "gguf/ggml-types.h"
#include "gguf/split.h"
#include "kernels/weight-layout.h"
#include "model/hparams.h"

namespace tmill {

// A 2-D weight (or a 1-D vector when n_rows == 1) stored row-major: n_rows rows of n_cols elements,
// each row `row_bytes` long in its ggml block format. ne[0] of the GGUF tensor is n_cols.
struct weight {
    ggml_type type = ggml_type::f32;
    const uint8_t * data = nullptr;
    int64_t n_cols = 0;
    int64_t n_rows = 0;
    size_t row_bytes = 0;
    kernels::weight_layout layout = kernels::weight_layout::gguf;   // set by repack_weights (model/repack.h)

    bool present() const { return data != nullptr; }
};

struct layer_weights {
    weight attn_norm;     // (n_embd) f32
    weight wq;            // (n_head * head_dim, n_embd)
    weight wk;            // (n_head_kv * head_dim, n_embd)
    weight wv;            // (n_head_kv * head_dim, n_embd)
    weight bq, bk, bv;    // qwen2 biases: (n_head * head_dim), (n_head_kv * head_dim) ×2; absent otherwise
    weight q_norm;        // qwen3, gemma3: (head_dim) f32; absent otherwise
    weight k_norm;        // qwen3, gemma3: (head_dim) f32
    weight wo;            // (n_embd, n_head * head_dim)
    weight attn_post_norm;   // gemma: (n_embd) f32, applied to the attention output; absent otherwise
    weight ffn_norm;      // (n_embd) f32
    weight w_gate;        // (n_ff, n_embd)
    weight w_up;          // (n_ff, n_embd)
    weight w_down;        // (n_embd, n_ff)
    weight ffn_post_norm;    // gemma: (n_embd) f32, applied to the FFN output; absent otherwise
};

struct model_weights {
    weight tok_embd;      // (n_vocab, n_embd): one row per token
    weight output_norm;   // (n_embd) f32
    weight output;        // (n_vocab, n_embd); tok_embd when the model ties them
    bool tied_output = false;
    weight rope_freqs;    // Llama 3.1+: (n_rot / 2) f32 divisors of each rope pair's frequency; absent otherwise
    std::vector<layer_weights> layers;   // (n_layer)
};

// Builds the views; throws tmill::error(gguf_invalid / gguf_unsupported) naming the tensor and what was
// expected (missing, wrong shape, unsupported type).
model_weights weights_load(const gguf::shard_set & files, const hparams & hp);

// The weight bytes one decode step reads, each once: every layer's weights, the output norm and the output
// matrix. The token embedding table is left out unless it doubles as the output matrix (a step reads one of
// its rows); the KV cache is not a weight.
std::vector<byte_range> decode_read_set(const model_weights & w);

} // namespace tmill
