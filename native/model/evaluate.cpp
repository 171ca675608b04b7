#include "model/evaluate.h"

#include <algorithm>
#include <numeric>
#include <thread>

#include "base/error.h"
#include "base/thread-pool.h"
#include "model/forward.h"
#include "model/kv-storage.h"

namespace tmill {

std::vector<float> evaluate(const std::shared_ptr<const model> & m, const std::vector<int32_t> & tokens, int32_t n_threads) {
    TM_CHECK(m && m->hp && m->weights, invalid_argument, "the model was loaded with vocabOnly and cannot run");
    const hparams & hp = *m->hp;
    const int32_t n = int32_t(tokens.size());
    TM_CHECK(n >= 1 && n <= int32_t(hp.n_ctx_train), invalid_argument,
             "evaluate needs 1.." + std::to_string(hp.n_ctx_train) + " tokens, got " + std::to_string(n));
    for (int32_t t : tokens) {
        TM_CHECK(t >= 0 && uint32_t(t) < hp.n_vocab, invalid_argument, "token id " + std::to_string(t) + " is out of vocabulary");
    }
    constexpr int32_t k_chunk = 64;
    const int32_t n_blocks = (n + k_kv_block_size - 1) / k_kv_block_size;
    kv_storage kv(hp, size_t(n_blocks) * size_t(2) * hp.n_layer * k_kv_block_size * hp.n_head_kv * hp.head_dim * sizeof(uint16_t));
    if (n_threads <= 0) n_threads = int32_t(std::max(1u, std::thread::hardware_concurrency()));
    thread_pool pool(n_threads);
    forward_limits limits;
    limits.max_tokens = k_chunk;
    limits.max_outputs = k_chunk;
    limits.max_context = n;
    llama_forward fwd(m, kv, pool, limits);

    std::vector<int32_t> table(static_cast<size_t>(n_blocks), 0);
    std::iota(table.begin(), table.end(), 0);
    const seq_blocks seq{table.data(), n_blocks};
    std::vector<int32_t> positions(k_chunk), seq_index(k_chunk, 0), rows(k_chunk);
    std::iota(rows.begin(), rows.end(), 0);
    std::vector<float> logits(size_t(n) * hp.n_vocab);
    for (int32_t start = 0; start < n; start += k_chunk) {
        const int32_t len = std::min(k_chunk, n - start);
        for (int32_t i = 0; i < len; ++i) positions[size_t(i)] = start + i;
        forward_batch b;
        b.n_tokens = len;
        b.tokens = tokens.data() + start;
        b.positions = positions.data();
        b.seq_index = seq_index.data();
        b.seqs = &seq;
        b.n_seqs = 1;
        b.output_rows = rows.data();
        b.n_outputs = len;
        fwd.run(b);
        fwd.logits(0, len, logits.data() + size_t(start) * hp.n_vocab);
    }
    return logits;
}

} // namespace tmill
