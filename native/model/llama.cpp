// The llama-family forward pass (llama, qwen2, qwen3, gemma2, gemma3), written to read top to bottom like
// a paper:
//   embed (× sqrt(n_embd) for gemma) → for each layer:
//   [rmsnorm → q,k,v (+bias) → (q/k norm) → rope (the layer's base) → (q pre-scale) → write K/V → paged
//    attention (a sliding window on gemma's local layers) → output projection → (post-norm) → residual]
//   [rmsnorm → act(gate) * up (silu, or gelu for gemma) → down → (post-norm) → residual]
//   → final norm → logits (soft-capped for gemma2).
// Only the rows whose logits are wanted go through the final norm and the output matrix.
#include "model/forward.h"

#include <algorithm>
#include <cmath>

#include "base/error.h"
#include "kernels/kernels.h"
#include "kernels/matmul.h"
#include "model/gelu.h"
#include "quant/quant.h"
#include "quant/fp16.h"

namespace tmill {

namespace {

void add_bias(float * y, const weight & b, int64_t n_rows) {
    const float * bias = reinterpret_cast<const float *>(b.data);
    for (int64_t r = 0; r < n_rows; ++r) {
        float * row = y + r * b.n_cols;
        for (int64_t i = 0; i < b.n_cols; ++i) row[i] += bias[i];
    }
}

const float * f32(const weight & w) { return reinterpret_cast<const float *>(w.data); }

void scale_rows(float * x, int64_t n, float s) {
    for (int64_t i = 0; i < n; ++i) x[i] *= s;
}

// z -> c * tanh(z / c), as ggml computes it: scale by 1/c, tanh, scale by c.
void softcap_rows(float * x, int64_t n, float c) {
    const float inv = 1.0f / c;
    for (int64_t i = 0; i < n; ++i) x[i] = c * std::tanh(x[i] * inv);
}

// Attention tasks per layer (when cut between KV groups, NOTE(attention-split)): (token, KV head) pairs are cut
// into this many ranges of about equal cost, claimed dynamically by the workers, so neither the causal triangle
// (later tokens attend to more keys) nor a core slowed by another process leaves a worker idle.
constexpr int64_t k_attn_tasks = 64;
// A unit's cost in key visits (per pair, or per head when cut between heads): its context length plus this
// fixed part (query rounding, output).
constexpr int64_t k_attn_pair_overhead = 8;

} // namespace

void llama_forward::matmul(const weight & w, const float * x, int64_t n, float * y) { matmul_same_x({{&w, y}}, x, n); }

void llama_forward::matmul_same_x(std::initializer_list<std::pair<const weight *, float *>> wy, const float * x, int64_t n) {
    // Consecutive weights that take the same converted rows run as one pool job (one meeting of the threads).
    kernels::matmul_part parts[kernels::k_matmul_max_parts];
    int n_parts = 0;
    ggml_type act = ggml_type::f32;
    int64_t n_in = 0;
    const void * xa = nullptr;
    auto flush = [&] {
        if (n_parts > 0) kernels::matmul_prepared_many(pool_, kt_, parts, n_parts, n_in, xa, n);
        n_parts = 0;
    };
    for (const auto & [w, y] : wy) {
        if (n_parts == 0 || quant::activation_type(w->type) != act || w->n_cols != n_in || n_parts == kernels::k_matmul_max_parts) {
            flush();
            xa = kernels::matmul_prepare(pool_, kt_, w->type, w->n_cols, x, n, mm_scratch_.data(), mm_scratch_.size());
            act = quant::activation_type(w->type);
            n_in = w->n_cols;
        }
        parts[n_parts++] = {w->type, w->data, w->n_rows, y, w->layout};
    }
    flush();
}

llama_forward::llama_forward(std::shared_ptr<const model> m, kv_storage & kv, thread_pool & pool, const forward_limits & limits)
    : model_(std::move(m)), hp_(*model_->hp), w_(*model_->weights), kv_(kv), pool_(pool), kt_(kernels::kernels_get()), limits_(limits) {
    TM_CHECK(limits_.max_tokens > 0 && limits_.max_outputs > 0 && limits_.max_context > 0, invalid_argument,
             "forward limits must be positive");
    const size_t t = size_t(limits_.max_tokens);
    const size_t n_q = size_t(hp_.n_head) * hp_.head_dim, n_kv = size_t(hp_.n_head_kv) * hp_.head_dim;
    x_.resize(t * hp_.n_embd);
    h_.resize(t * hp_.n_embd);
    q_.resize(t * n_q);
    k_cur_.resize(t * n_kv);
    v_cur_.resize(t * n_kv);
    attn_.resize(t * n_q);
    proj_.resize(t * hp_.n_embd);
    gate_.resize(t * hp_.n_ff);
    up_.resize(t * hp_.n_ff);
    vacc_.resize(size_t(k_attn_tasks) * kernels::attend_f16_heads_scratch(hp_.n_head / hp_.n_head_kv, hp_.head_dim));
    out_h_.resize(size_t(limits_.max_outputs) * hp_.n_embd);
    if (hp_.n_swa > 0) swa_rows_.resize(size_t(k_attn_tasks) * hp_.n_swa);

    // Matmul scratch: activation rows converted for the widest (type, n_in) this model multiplies.
    size_t scratch = 0;
    auto need = [&](const weight & w, int64_t rows) {
        scratch = std::max(scratch, kernels::matmul_scratch_bytes(w.type, w.n_cols, rows));
    };
    for (const layer_weights & L : w_.layers) {
        for (const weight * w : {&L.wq, &L.wk, &L.wv, &L.wo, &L.w_gate, &L.w_up, &L.w_down}) need(*w, limits_.max_tokens);
    }
    need(w_.output, limits_.max_outputs);
    mm_scratch_.resize(scratch);
}

// NOTE(row-ops): the row operations between the matmuls (norms, RoPE, the KV cache's F16 rows, SwiGLU, the
// residual adds) ran on the calling thread alone while the pool's workers spun: ~3 % of SmolLM2-135M's prefill
// samples on the Xeon, twice that in wall time with 2 threads. Chunked over the pool they take half.
template <typename F>
void llama_forward::for_rows(int64_t n, const F & f) {
    const int64_t chunks = std::min<int64_t>(n, 4 * int64_t(pool_.n_threads()));
    if (chunks < 2) {
        for (int64_t t = 0; t < n; ++t) f(t);
        return;
    }
    pool_.parallel_for(chunks, [&](int64_t c) {
        for (int64_t t = c * n / chunks; t < (c + 1) * n / chunks; ++t) f(t);
    });
}

void llama_forward::run(const forward_batch & batch) {
    TM_CHECK(batch.n_tokens > 0 && batch.n_tokens <= limits_.max_tokens && batch.n_outputs >= 0 &&
             batch.n_outputs <= limits_.max_outputs, internal, "forward batch exceeds its limits");
    const int64_t n = batch.n_tokens;
    const int64_t n_embd = hp_.n_embd, hd = hp_.head_dim;
    const int64_t n_kv = int64_t(hp_.n_head_kv) * hd;

    // Embedding lookup.
    for (int64_t t = 0; t < n; ++t) {
        quant::dequantize_row(w_.tok_embd.type, w_.tok_embd.data + size_t(batch.tokens[t]) * w_.tok_embd.row_bytes,
                              x_.data() + t * n_embd, n_embd);
    }
    if (hp_.embd_scale != 1.0f) scale_rows(x_.data(), n * n_embd, hp_.embd_scale);

    for (uint32_t il = 0; il < hp_.n_layer; ++il) {
        const layer_weights & L = w_.layers[il];

        // Attention block.
        for_rows(n, [&](int64_t t) { kt_.rmsnorm(x_.data() + t * n_embd, f32(L.attn_norm), h_.data() + t * n_embd, n_embd, hp_.rms_eps); });
        matmul_same_x({{&L.wq, q_.data()}, {&L.wk, k_cur_.data()}, {&L.wv, v_cur_.data()}}, h_.data(), n);
        if (L.bq.present()) add_bias(q_.data(), L.bq, n);
        if (L.bk.present()) add_bias(k_cur_.data(), L.bk, n);
        if (L.bv.present()) add_bias(v_cur_.data(), L.bv, n);
        const int64_t n_q = int64_t(hp_.n_head) * hd;
        const auto style = hp_.rope == rope_style::neox ? kernels::rope_style::neox : kernels::rope_style::normal;
        const float rope_base = hp_.rope_base(il), rope_scale = hp_.rope_scale(il);
        const float * rope_factors = w_.rope_freqs.present() ? f32(w_.rope_freqs) : nullptr;
        for_rows(n, [&](int64_t t) {
            float * q = q_.data() + t * n_q;
            float * k = k_cur_.data() + t * n_kv;
            if (L.q_norm.present())
                for (int64_t h = 0; h < hp_.n_head; ++h) kt_.rmsnorm(q + h * hd, f32(L.q_norm), q + h * hd, hd, hp_.rms_eps);
            if (L.k_norm.present())
                for (int64_t h = 0; h < hp_.n_head_kv; ++h) kt_.rmsnorm(k + h * hd, f32(L.k_norm), k + h * hd, hd, hp_.rms_eps);
            kt_.rope(q, 1, hp_.n_head, hd, hp_.n_rot, batch.positions + t, rope_base, rope_scale, rope_factors, style);
            kt_.rope(k, 1, hp_.n_head_kv, hd, hp_.n_rot, batch.positions + t, rope_base, rope_scale, rope_factors, style);
        });
        // Gemma scales the queries in F32 and attends with scale 1 (llama.cpp's order, kept for its rounding).
        if (hp_.attn_q_scale != 0.0f) scale_rows(q_.data(), n * int64_t(hp_.n_head) * hd, hp_.attn_q_scale);
        // Write this batch's keys and values into their cache slots before attending, so a token sees
        // the earlier tokens of its own sequence that run in the same batch.
        for_rows(n, [&](int64_t t) {
            const seq_blocks & s = batch.seqs[batch.seq_index[t]];
            const int32_t pos = batch.positions[t];
            const int32_t block = s.table[pos / k_kv_block_size], slot = pos % k_kv_block_size;
            kt_.quantize_f16(k_cur_.data() + t * n_kv, kv_.k_row(il, block, slot), n_kv);
            kt_.quantize_f16(v_cur_.data() + t * n_kv, kv_.v_row(il, block, slot), n_kv);
        });
        attention(il, batch);
        matmul(L.wo, attn_.data(), n, proj_.data());
        if (L.attn_post_norm.present()) post_norm(L.attn_post_norm, n);
        // The residual add and the next norm, row by row.
        for_rows(n, [&](int64_t t) {
            float * x = x_.data() + t * n_embd;
            kt_.add(x, proj_.data() + t * n_embd, x, n_embd);
            kt_.rmsnorm(x, f32(L.ffn_norm), h_.data() + t * n_embd, n_embd, hp_.rms_eps);
        });
        matmul_same_x({{&L.w_gate, gate_.data()}, {&L.w_up, up_.data()}}, h_.data(), n);
        // Row by row, as ggml's swiglu runs: where a row's vector groups end and its scalar tail begins
        // must not depend on how many tokens share the batch.
        const int64_t n_ff = hp_.n_ff;
        for_rows(n, [&](int64_t t) {
            float * g = gate_.data() + t * n_ff;
            if (hp_.ffn_act == ffn_activation::gelu) {
                gelu_mul(g, up_.data() + t * n_ff, g, n_ff);
            } else {
                kt_.silu_mul(g, up_.data() + t * n_ff, g, n_ff);
            }
        });
        matmul(L.w_down, gate_.data(), n, proj_.data());
        if (L.ffn_post_norm.present()) post_norm(L.ffn_post_norm, n);
        for_rows(n, [&](int64_t t) { kt_.add(x_.data() + t * n_embd, proj_.data() + t * n_embd, x_.data() + t * n_embd, n_embd); });
    }

    // The final norm of the requested rows only; logits() projects them to the vocabulary on demand.
    for (int32_t o = 0; o < batch.n_outputs; ++o) {
        const int64_t t = batch.output_rows[o];
        kt_.rmsnorm(x_.data() + t * n_embd, f32(w_.output_norm), out_h_.data() + int64_t(o) * n_embd, n_embd, hp_.rms_eps);
    }
    n_outputs_ = batch.n_outputs;
}

void llama_forward::logits(int32_t first, int32_t count, float * out) {
    TM_CHECK(first >= 0 && count >= 0 && first + count <= n_outputs_, internal, "logits rows out of range");
    if (count == 0) return;
    matmul(w_.output, out_h_.data() + int64_t(first) * hp_.n_embd, count, out);
    if (hp_.final_softcap != 0.0f) softcap_rows(out, int64_t(count) * hp_.n_vocab, hp_.final_softcap);
}

// proj_'s n rows (a sub-layer's output) through the gemma post-norm w, in place.
void llama_forward::post_norm(const weight & w, int64_t n) {
    for_rows(n, [&](int64_t t) {
        float * row = proj_.data() + t * hp_.n_embd;
        kt_.rmsnorm(row, f32(w), row, hp_.n_embd, hp_.rms_eps);
    });
}

// Paged causal attention: token t of sequence s at position p attends to positions 0..p of s, or on a
// sliding-window layer to positions p - n_swa + 1 .. p.
// Work is cut into contiguous ranges of (token, query head) units of about equal cost (NOTE(attention-split)),
// each task with its own scratch.
void llama_forward::attention(uint32_t layer, const forward_batch & batch) {
    const int64_t hd = hp_.head_dim;
    const int64_t n_q = int64_t(hp_.n_head) * hd;
    const int64_t group = hp_.n_head / hp_.n_head_kv;
    const int64_t n_kv_head = hp_.n_head_kv;
    const float scale = hp_.attn_q_scale != 0.0f ? 1.0f : 1.0f / std::sqrt(float(hd));
    const bool swa = hp_.is_swa(layer);
    const int32_t n_swa = int32_t(hp_.n_swa);

    // NOTE(attention): llama.cpp's CPU flash-attention numerics (F16 query, online softmax, F16 value
    // accumulator), so logits match node-llama-cpp's to ~1e-3; the kernel (kernel_table::attend_f16)
    // documents them. Each (token, head) is computed whole by one task over its own sequence's keys in
    // order, and attend_f16_heads gives each head of a group bitwise attend_f16's result, so results do
    // not depend on the batch, the task split, the grouping or the thread count.
    const size_t slot_stride = size_t(kv_.row_elems());                      // one (n_head_kv, head_dim) row
    const size_t block_stride = size_t(k_kv_block_size) * slot_stride;
    const uint16_t * k_layer = kv_.k_row(layer, 0, 0);   // (n_blocks, block_size, n_head_kv, head_dim) F16
    const uint16_t * v_layer = kv_.v_row(layer, 0, 0);   // (n_blocks, block_size, n_head_kv, head_dim) F16
    const size_t scratch_floats = kernels::attend_f16_heads_scratch(group, hd);

    // NOTE(attention-split): tasks are contiguous ranges of (token, query head) units of about equal cost,
    // cut between KV groups when there are plenty of (token, KV head) pairs, and between single heads when
    // there are fewer than two a thread. A one-token decode of SmolLM2-135M has 3 pairs: cut at pairs, one of
    // 2 threads attended to two and the other waited. Cut at heads, each thread takes half of the 9 heads
    // (one task per thread), calling the kernel once per KV group its range touches; attend_f16_heads gives
    // each head the same bits whichever heads share a call, so the split changes no result.
    const int64_t n_threads = std::min<int64_t>(pool_.n_threads(), k_attn_tasks);
    const bool by_head = group > 1 && int64_t(batch.n_tokens) * n_kv_head < 2 * n_threads;
    const int64_t unit_heads = by_head ? 1 : group;             // query heads per unit
    const int64_t units_per_token = hp_.n_head / unit_heads;
    const int64_t n_tasks = by_head ? n_threads : k_attn_tasks;
    // Task c takes the units whose cumulative cost starts in [total * c / n_tasks, total * (c + 1) / n_tasks);
    // a token's units cost the same, so the boundaries are found per token.
    int64_t total = 0;
    for (int32_t t = 0; t < batch.n_tokens; ++t) total += units_per_token * (int64_t(batch.positions[t]) + 1 + k_attn_pair_overhead);
    int64_t bounds[k_attn_tasks + 1];   // (n_tasks + 1) first query head (t * n_head + h) of each task, then all heads
    {
        int64_t cum = 0, c = 0;
        for (int32_t t = 0; t < batch.n_tokens; ++t) {
            const int64_t cost = int64_t(batch.positions[t]) + 1 + k_attn_pair_overhead;
            for (int64_t u = 0; u < units_per_token; ++u, cum += cost) {
                // unit (t, u) starts at cum; tasks whose share starts at or before it begin no later.
                while (c <= n_tasks - 1 && total * c <= cum * n_tasks) bounds[c++] = int64_t(t) * hp_.n_head + u * unit_heads;
            }
        }
        for (; c <= n_tasks; ++c) bounds[c] = int64_t(batch.n_tokens) * hp_.n_head;
    }
    // NOTE(sliding window): the kernels visit keys 0..n_ctx-1 through a block table. A window that starts
    // at key w0 is handed to them as a table of single-slot blocks (block size 1, block stride = slot
    // stride) listing the window's slots, so they visit exactly keys w0..p in order — what llama.cpp's
    // flash attention computes, as it skips masked keys. Every block stays allocated (the cache does not
    // yet free blocks that left every window).
    pool_.parallel_for(n_tasks, [&](int64_t task) {
        float * scratch = vacc_.data() + size_t(task) * scratch_floats;   // this task's kernel scratch
        int32_t * window = swa ? swa_rows_.data() + size_t(task) * size_t(n_swa) : nullptr;   // (n_swa) slots
        int64_t window_token = -1;   // the token whose window `window` holds
        for (int64_t head = bounds[task]; head < bounds[task + 1];) {
            const int64_t t = head / hp_.n_head, h0 = head % hp_.n_head;   // h0: this call's first query head
            const int64_t kvh = h0 / group;
            // The heads of this KV group that the task holds.
            const int64_t n_heads = std::min(bounds[task + 1] - head, (kvh + 1) * group - h0);
            head += n_heads;
            const seq_blocks & s = batch.seqs[batch.seq_index[t]];
            const int64_t kv_off = kvh * hd;
            const int32_t n_ctx = batch.positions[t] + 1;
            const float * q = q_.data() + t * n_q + h0 * hd;
            float * out = attn_.data() + t * n_q + h0 * hd;
            if (swa && n_ctx > n_swa) {
                if (window_token != t) {
                    const int32_t w0 = n_ctx - n_swa;
                    for (int32_t j = 0; j < n_swa; ++j) {
                        const int32_t p = w0 + j;
                        window[j] = s.table[p / k_kv_block_size] * k_kv_block_size + p % k_kv_block_size;
                    }
                    window_token = t;
                }
                kt_.attend_f16_heads(q, n_heads, hd, scale, hp_.attn_softcap, n_swa, window, 1, k_layer + kv_off,
                                     v_layer + kv_off, slot_stride, slot_stride, out, scratch);
            } else {
                kt_.attend_f16_heads(q, n_heads, hd, scale, hp_.attn_softcap, n_ctx, s.table, k_kv_block_size,
                                     k_layer + kv_off, v_layer + kv_off, block_stride, slot_stride, out, scratch);
            }
        }
    });
}

} // namespace tmill
