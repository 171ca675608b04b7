#include "model/weights.h"

#include <cmath>
#include <string>

#include "base/error.h"

namespace tmill {

namespace {

std::string shape_str(int64_t a, int64_t b) {
    return b == 0 ? "[" + std::to_string(a) + "]" : "[" + std::to_string(a) + ", " + std::to_string(b) + "]";
}

// Rows [first, first + count) of w: a view into a fused tensor (phi3's attn_qkv, its gate-and-up ffn_up).
weight rows_of(const weight & w, int64_t first, int64_t count) {
    weight v = w;
    v.data = w.data + size_t(first) * w.row_bytes;
    v.n_rows = count;
    return v;
}

class binder {
public:
    binder(const gguf::shard_set & f) : files_(f) {}

    // Binds a tensor of GGUF shape [n_cols] (n_rows == 0) or [n_cols, n_rows].
    weight bind(const std::string & name, int64_t n_cols, int64_t n_rows, bool required, bool vector_f32) const {
        const gguf::tensor_info * t = files_.find_tensor(name);
        if (!t) {
            TM_CHECK(!required, gguf_invalid, files_.first().path() + ": missing tensor '" + name + "'");
            return {};
        }
        const int64_t want_rows = n_rows == 0 ? 1 : n_rows;
        const uint32_t want_dims = n_rows == 0 ? 1 : 2;
        const bool shape_ok = t->ne[0] == n_cols && t->ne[1] == want_rows && t->ne[2] == 1 && t->ne[3] == 1 &&
                              (t->n_dims == want_dims || (want_dims == 2 && t->n_dims == 1 && want_rows == 1));
        TM_CHECK(shape_ok, gguf_invalid,
                 files_.first().path() + ": tensor '" + name + "' has shape " + describe(*t) + ", expected " + shape_str(n_cols, n_rows));
        const auto traits = ggml_type_info(uint32_t(t->type));
        const char * type_name = traits.name ? traits.name : "unknown";
        if (vector_f32) {
            TM_CHECK(t->type == ggml_type::f32, gguf_unsupported,
                     files_.first().path() + ": tensor '" + name + "' has type " + type_name + ", expected f32");
        } else {
            TM_CHECK(ggml_type_supported(t->type), gguf_unsupported,
                     files_.first().path() + ": tensor '" + name + "' has type " + type_name +
                     ", which tokenmill does not support (supported: " + ggml_supported_type_names() + ")");
        }
        weight w;
        w.type = t->type;
        w.data = t->data;
        w.n_cols = n_cols;
        w.n_rows = want_rows;
        w.row_bytes = size_t(n_cols / traits.block_size) * traits.type_size;
        return w;
    }

private:
    static std::string describe(const gguf::tensor_info & t) {
        std::string s = "[";
        for (uint32_t d = 0; d < t.n_dims; ++d) s += (d ? ", " : "") + std::to_string(t.ne[d]);
        return s + "]";
    }

    const gguf::shard_set & files_;
};

} // namespace

model_weights weights_load(const gguf::shard_set & files, const hparams & hp) {
    const binder b(files);
    const gguf::file & file = files.first();
    const int64_t n_embd = hp.n_embd, n_ff = hp.n_ff, n_vocab = hp.n_vocab;
    const int64_t n_q = int64_t(hp.n_head) * hp.head_dim, n_kv = int64_t(hp.n_head_kv) * hp.head_dim;
    const bool qwen2 = hp.arch == model_arch::qwen2;
    const bool qk_norm = hp.arch == model_arch::qwen3 || hp.arch == model_arch::gemma3;
    const bool phi3 = hp.arch == model_arch::phi3;
    // Phi-3's 128k models scale rope by position-dependent long/short factors (longrope); without them the
    // model would run quietly wrong.
    for (const char * name : {"rope_factors_long.weight", "rope_factors_short.weight"}) {
        TM_CHECK(files.find_tensor(name) == nullptr, gguf_unsupported,
                 file.path() + ": tensor '" + name + "' (phi3 longrope scaling) is not supported");
    }
    model_weights w;
    // Llama 3.1+ rope frequency factors (llama.cpp applies them to the llama family only). Another architecture
    // carrying them would run quietly wrong without them, so it is refused.
    if (hp.arch == model_arch::llama) {
        w.rope_freqs = b.bind("rope_freqs.weight", hp.n_rot / 2, 0, false, true);
        const float * ff = reinterpret_cast<const float *>(w.rope_freqs.data);
        for (int64_t i = 0; w.rope_freqs.present() && i < w.rope_freqs.n_cols; ++i) {
            TM_CHECK(std::isfinite(ff[i]) && ff[i] > 0.0f, gguf_invalid,
                     file.path() + ": tensor 'rope_freqs.weight' has factor " + std::to_string(ff[i]) + " at " +
                     std::to_string(i) + "; rope frequency factors must be positive and finite");
        }
    } else {
        TM_CHECK(files.find_tensor("rope_freqs.weight") == nullptr, gguf_unsupported,
                 file.path() + ": tensor 'rope_freqs.weight' (rope frequency factors) is supported for llama models only, not " +
                 hp.arch_name);
    }
    w.tok_embd = b.bind("token_embd.weight", n_embd, n_vocab, true, false);
    w.output_norm = b.bind("output_norm.weight", n_embd, 0, true, true);
    w.output = b.bind("output.weight", n_embd, n_vocab, false, false);
    if (!w.output.present()) {
        w.output = w.tok_embd;
        w.tied_output = true;
    }
    w.layers.resize(hp.n_layer);
    for (uint32_t il = 0; il < hp.n_layer; ++il) {
        const std::string p = "blk." + std::to_string(il) + ".";
        layer_weights & l = w.layers[il];
        l.attn_norm = b.bind(p + "attn_norm.weight", n_embd, 0, true, true);
        // phi3 stores Q, K and V as the rows of one attn_qkv (converters may also split it).
        const weight qkv = phi3 ? b.bind(p + "attn_qkv.weight", n_embd, n_q + 2 * n_kv, false, false) : weight{};
        if (qkv.present()) {
            l.wq = rows_of(qkv, 0, n_q);
            l.wk = rows_of(qkv, n_q, n_kv);
            l.wv = rows_of(qkv, n_q + n_kv, n_kv);
        } else {
            l.wq = b.bind(p + "attn_q.weight", n_embd, n_q, true, false);
            l.wk = b.bind(p + "attn_k.weight", n_embd, n_kv, true, false);
            l.wv = b.bind(p + "attn_v.weight", n_embd, n_kv, true, false);
        }
        l.bq = b.bind(p + "attn_q.bias", n_q, 0, qwen2, true);
        l.bk = b.bind(p + "attn_k.bias", n_kv, 0, qwen2, true);
        l.bv = b.bind(p + "attn_v.bias", n_kv, 0, qwen2, true);
        l.q_norm = b.bind(p + "attn_q_norm.weight", hp.head_dim, 0, qk_norm, true);
        l.k_norm = b.bind(p + "attn_k_norm.weight", hp.head_dim, 0, qk_norm, true);
        l.wo = b.bind(p + "attn_output.weight", n_q, n_embd, true, false);
        l.attn_post_norm = b.bind(p + "post_attention_norm.weight", n_embd, 0, hp.post_norms, true);
        l.ffn_norm = b.bind(p + "ffn_norm.weight", n_embd, 0, true, true);
        if (phi3) {
            // ffn_up holds the gate rows, then the up rows (ggml_swiglu's halves).
            const weight gate_up = b.bind(p + "ffn_up.weight", n_embd, 2 * n_ff, true, false);
            l.w_gate = rows_of(gate_up, 0, n_ff);
            l.w_up = rows_of(gate_up, n_ff, n_ff);
        } else {
            l.w_gate = b.bind(p + "ffn_gate.weight", n_embd, n_ff, true, false);
            l.w_up = b.bind(p + "ffn_up.weight", n_embd, n_ff, true, false);
        }
        l.w_down = b.bind(p + "ffn_down.weight", n_ff, n_embd, true, false);
        l.ffn_post_norm = b.bind(p + "post_ffw_norm.weight", n_embd, 0, hp.post_norms, true);
    }
    return w;
}

std::vector<byte_range> decode_read_set(const model_weights & w) {
    std::vector<byte_range> out;
    const auto add = [&](const weight & v) {
        if (v.present()) out.push_back({v.data, size_t(v.n_rows) * v.row_bytes});
    };
    for (const layer_weights & l : w.layers) {
        for (const weight * v : {&l.attn_norm, &l.wq, &l.wk, &l.wv, &l.bq, &l.bk, &l.bv, &l.q_norm, &l.k_norm, &l.wo,
                                 &l.attn_post_norm, &l.ffn_norm, &l.w_gate, &l.w_up, &l.w_down, &l.ffn_post_norm}) {
            add(*v);
        }
    }
    add(w.output_norm);
    add(w.output);
    add(w.rope_freqs);
    return out;
}

} // namespace tmill
