// One batched forward pass of a llama-family model over tokens of many sequences, reading and writing a
// paged KV cache. The caller (the engine) decides which tokens run; this file only computes.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <utility>
#include <vector>

#include "base/thread-pool.h"
#include "kernels/kernels.h"
#include "model/kv-storage.h"
#include "model/model.h"

namespace tmill {

// A sequence's physical KV blocks in logical order: position p lives in block table[p / 16], slot p % 16.
struct seq_blocks {
    const int32_t * table = nullptr;   // (n_blocks)
    int32_t n_blocks = 0;
};

struct forward_batch {
    int32_t n_tokens = 0;
    const int32_t * tokens = nullptr;      // (n_tokens) token ids
    const int32_t * positions = nullptr;   // (n_tokens) position of each token in its sequence
    const int32_t * seq_index = nullptr;   // (n_tokens) index into `seqs`
    const seq_blocks * seqs = nullptr;     // (n_seqs)
    int32_t n_seqs = 0;
    const int32_t * output_rows = nullptr; // (n_outputs) batch rows whose logits are wanted, ascending
    int32_t n_outputs = 0;
};

struct forward_limits {
    int32_t max_tokens = 512;    // most tokens in one batch
    int32_t max_outputs = 64;    // most logits rows in one batch
    int32_t max_context = 2048;  // longest sequence (positions < max_context)
};

// NOTE(forward): batch invariance — every per-token quantity (matmul rows, norms, attention over the
// token's own sequence) is computed with a reduction order that depends only on that token's data, never
// on the other rows of the batch or on the thread count, so a sequence's logits are identical alone or
// batched.
class llama_forward {
public:
    llama_forward(std::shared_ptr<const model> m, kv_storage & kv, thread_pool & pool, const forward_limits & limits);

    // Runs every layer over the batch and keeps the final-normed hidden state of each output row.
    // pre: batch within limits; every position's block exists in its sequence's table; tokens < n_vocab.
    void run(const forward_batch & batch);
    // Logits of output rows [first, first + count) of the last run() (in output_rows order) into
    // out (count, n_vocab). Callers with many output rows (prompt logprobs) take them in chunks.
    void logits(int32_t first, int32_t count, float * out);

    const forward_limits & limits() const { return limits_; }

private:
    void attention(uint32_t layer, const forward_batch & batch);
    void matmul(const weight & w, const float * x, int64_t n, float * y);   // y (n, w.n_rows) = x · wᵀ
    void post_norm(const weight & w, int64_t n);
    // f(t) for each row t of n, in contiguous chunks over the pool when there are several (every row operation
    // reads and writes its own rows only, so no result depends on the chunking or the threads).
    template <typename F>
    void for_rows(int64_t n, const F & f);
    // y_i (n, w_i.n_rows) = x · w_iᵀ for weights reading the same x (q/k/v, gate/up): x's rows are
    // converted for the kernels once per run of weights with the same activation type and width.
    void matmul_same_x(std::initializer_list<std::pair<const weight *, float *>> wy, const float * x, int64_t n);

    std::shared_ptr<const model> model_;
    const hparams & hp_;
    const model_weights & w_;
    kv_storage & kv_;
    thread_pool & pool_;
    const kernels::kernel_table & kt_;
    forward_limits limits_;

    // Scratch sized once for limits_.max_tokens rows.
    std::vector<float> x_;        // (max_tokens, n_embd) residual stream
    std::vector<float> h_;        // (max_tokens, n_embd) normed input of a sub-layer
    std::vector<float> q_;        // (max_tokens, n_head * head_dim)
    std::vector<float> k_cur_;    // (max_tokens, n_head_kv * head_dim) this batch's keys
    std::vector<float> v_cur_;    // (max_tokens, n_head_kv * head_dim) this batch's values
    std::vector<float> attn_;     // (max_tokens, n_head * head_dim)
    std::vector<float> proj_;     // (max_tokens, n_embd) output of attn_output / ffn_down
    std::vector<float> gate_;     // (max_tokens, n_ff)
    std::vector<float> up_;       // (max_tokens, n_ff)
    std::vector<float> vacc_;     // (k_attn_tasks, attend_f16_heads_scratch(n_head / n_head_kv, head_dim)) per attention task: the kernel's scratch
    std::vector<float> out_h_;    // (max_outputs, n_embd) final-normed rows that produce logits
    std::vector<int32_t> swa_rows_;   // (k_attn_tasks, n_swa) per attention task: a sliding window's cache slots
    int32_t n_outputs_ = 0;       // output rows held in out_h_ by the last run()
    std::vector<uint8_t> mm_scratch_;  // matmul's converted activation rows
};

} // namespace tmill
