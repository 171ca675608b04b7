#include "kernels/matmul.h"

#include "base/error.h"
#include "kernels/amx/amx.h"
#include "quant/q4-0-x16.h"
#include "quant/q4-k-x16.h"
#include "quant/q5-0-x16.h"
#include "quant/q6-k-x16.h"
#include "quant/q8-0-x16.h"
#include "quant/quant.h"

#include <string>

namespace tmill::kernels {

namespace {
// Rows per task: enough tasks that the pool's dynamic claiming balances the threads, few enough that a task
// streams a long run of weights. Multiples of 4 keep the kernels' row tiles full. Measured on the AMD EPYC
// (2 threads, avx512, decode A/B through Engine, interleaved addons): one-token decode of the synthetic Q8_0
// model with 2 tasks per thread against the 8 it had: 41-45 against 31-40 tok/s (nine repetitions each) with
// the weights read at 50-62 GB/s, 30.6 against 29.7 (medians) at 34-38 GB/s; 1 task per thread as fast as 2; Qwen2.5-Coder-1.5B
// Q4_K_M and 2 and 4 streams unchanged or faster. Batches of 8 to 15 tokens keep 4 per thread (2 measured
// the same within the noise on prefill and 16 streams); from k_amx_min_tokens on 2, since every task packs the
// batch's activations for its tiles again: on the Xeon (avx512+amx, 2 threads, interleaved addons) the synthetic
// Q8_0 512-token prompt ~365 -> ~380 tok/s, Qwen2.5-Coder-1.5B's 256-token prompt ~323 -> ~334, SmolLM2-135M's
// ~1490 -> ~1510, 16 streams unchanged.
// One token takes contiguous shares, its chunks capped in bytes (NOTE(decode-shares), below).
// Rows repacked 16 at a time are cut on multiples of 16, and so are the GGUF rows of batches the AMX tiles
// take (k_amx_min_tokens and more): a task's last group of fewer than 16 rows costs the tiles a whole group,
// and SmolLM2-135M's 576- and 192-row matrices in 8 tasks had a partial group in every task (a third of the k
// and v products wasted); the AVX-512 panels (8 rows) lose nothing by it.
// NOTE(decode-shares): a one-token product is cut into chunks of at most k_share_chunk_bytes of weights, at least
// two a thread (rows_per_task), run by thread_pool::run_shares: each thread streams its own contiguous share in
// order, and one whose share is done takes the other's last chunks. With dynamic tasks the threads took turns over 4
// tasks, and the one that finished first waited for the other's last task: ~7.5 % of the engine thread's samples
// were that wait (the synthetic TinyLlama-shape Q8_0, AMD EPYC, avx512, 2 threads), ~2 % with shares. Measured in
// one process, requests alternating with and without (16-token prompt, 48 or 64 greedy tokens, 16-24 rounds, median
// of the paired ratios): SmolLM2-135M Q4_1 1.06-1.09, Qwen2.5-Coder-1.5B Q4_K_M 1.015, the synthetic Q8_0 0.99-1.005
// while the host read ~33 GB/s and 1.05 while it read ~45. Batches of 2 to 4 tokens gained nothing (4 streams of the
// synthetic model 0.99) and keep the tasks.
constexpr size_t k_share_chunk_bytes = size_t(512) << 10;

// w_row: bytes of one weight row in its layout (weight_row_bytes).
int64_t rows_per_task(int64_t n_out, size_t w_row, int n_threads, int64_t n_tok, weight_layout layout) {
    if (n_threads <= 1) return n_out;
    const int64_t target_tasks = int64_t(n_threads) * (n_tok >= 8 && n_tok < k_amx_min_tokens ? 4 : 2);
    const int64_t unit = layout == weight_layout::gguf && n_tok < k_amx_min_tokens ? 4 : quant::k_x16_rows;
    int64_t rows = (n_out + target_tasks - 1) / target_tasks;
    if (n_tok == 1 && int64_t(k_share_chunk_bytes / w_row) < rows) rows = int64_t(k_share_chunk_bytes / w_row);
    rows = (rows + unit - 1) / unit * unit;
    return rows < 16 ? 16 : rows;
}
} // namespace

size_t weight_row_bytes(ggml_type type, weight_layout layout, int64_t n_in) {
    // The Q8_0, Q4_1, Q4_0 and Q5_0 layouts are as long as the GGUF rows (quant/q8-0-x16.h, quant/q4-1-x16.h,
    // quant/q4-0-x16.h, quant/q5-0-x16.h).
    if (layout == weight_layout::q4_k_x16) return quant::q4_k_x16_row_bytes(n_in);
    if (layout == weight_layout::q6_k_x16) return quant::q6_k_x16_row_bytes(n_in);
    return quant::row_bytes(type, n_in);
}

size_t matmul_scratch_bytes(ggml_type type, int64_t n_in, int64_t n_tok) {
    const ggml_type act = quant::activation_type(type);
    if (act == ggml_type::f32) return 0;  // F32 weights read x directly
    return quant::row_bytes(act, n_in) * size_t(n_tok);
}

bool weight_layout_fits(weight_layout layout, int64_t n_in) {
    switch (layout) {
        case weight_layout::q8_0_x16: return quant::q8_0_x16_fits(n_in);
        case weight_layout::q4_0_x16: return quant::q4_0_x16_fits(n_in);
        case weight_layout::q5_0_x16: return quant::q5_0_x16_fits(n_in);
        default: return true;
    }
}

matmul_rows_fn matmul_rows_for(const kernel_table & k, ggml_type type, weight_layout layout) {
    if (layout == weight_layout::q4_k_x16) {
        TM_CHECK(type == ggml_type::q4_k, invalid_argument, "matmul: the Q4_K 16-row layout holds Q4_K weights only");
        return k.matmul_q4_k_x16;
    }
    if (layout == weight_layout::q6_k_x16) {
        TM_CHECK(type == ggml_type::q6_k, invalid_argument, "matmul: the Q6_K 16-row layout holds Q6_K weights only");
        return k.matmul_q6_k_x16;
    }
    if (layout == weight_layout::q8_0_x16) {
        TM_CHECK(type == ggml_type::q8_0, invalid_argument, "matmul: the Q8_0 16-row layout holds Q8_0 weights only");
        return k.matmul_q8_0_x16;
    }
    if (layout == weight_layout::q4_1_x16) {
        TM_CHECK(type == ggml_type::q4_1, invalid_argument, "matmul: the Q4_1 16-row layout holds Q4_1 weights only");
        return k.matmul_q4_1_x16;
    }
    if (layout == weight_layout::q4_0_x16) {
        TM_CHECK(type == ggml_type::q4_0 || type == ggml_type::iq4_nl, invalid_argument,
                 "matmul: the Q4_0 16-row layout holds Q4_0 and IQ4_NL weights only");
        return type == ggml_type::q4_0 ? k.matmul_q4_0_x16 : k.matmul_iq4_nl_x16;
    }
    if (layout == weight_layout::q5_0_x16) {
        TM_CHECK(type == ggml_type::q5_0, invalid_argument, "matmul: the Q5_0 16-row layout holds Q5_0 weights only");
        return k.matmul_q5_0_x16;
    }
    switch (type) {
        case ggml_type::f32: return k.matmul_f32;
        case ggml_type::f16: return k.matmul_f16;
        case ggml_type::bf16: return k.matmul_bf16;
        case ggml_type::q8_0: return k.matmul_q8_0;
        case ggml_type::q4_0: return k.matmul_q4_0;
        case ggml_type::q4_1: return k.matmul_q4_1;
        case ggml_type::q5_0: return k.matmul_q5_0;
        case ggml_type::q5_1: return k.matmul_q5_1;
        case ggml_type::iq4_nl: return k.matmul_iq4_nl;
        case ggml_type::q2_k: return k.matmul_q2_k;
        case ggml_type::q3_k: return k.matmul_q3_k;
        case ggml_type::q4_k: return k.matmul_q4_k;
        case ggml_type::q5_k: return k.matmul_q5_k;
        case ggml_type::q6_k: return k.matmul_q6_k;
        case ggml_type::iq4_xs: return k.matmul_iq4_xs;
        default: break;
    }
    throw error(error_code::invalid_argument, "matmul: unsupported weight type " + ggml_type_describe(uint32_t(type)));
}

const void * matmul_prepare(thread_pool & pool, const kernel_table & k, ggml_type type, int64_t n_in,
                            const float * x, int64_t n_tok, void * scratch, size_t scratch_bytes) {
    TM_CHECK(n_tok >= 1 && n_in >= 1, invalid_argument, "matmul: empty dimensions");
    const ggml_type act = quant::activation_type(type);
    TM_CHECK(n_in % quant::type_block_size(type) == 0, invalid_argument,
             "matmul: n_in is not a multiple of the weight block size");
    TM_CHECK(scratch_bytes >= matmul_scratch_bytes(type, n_in, n_tok), invalid_argument,
             "matmul: scratch too small");
    if (act == ggml_type::f32) return x;
    TM_CHECK(scratch != nullptr, invalid_argument, "matmul: scratch is null");
    const size_t x_row = quant::row_bytes(act, n_in);
    char * dst = static_cast<char *>(scratch);
    const quantize_kernel * quantize = act == ggml_type::q8_0 ? k.quantize_q8_0
                                     : act == ggml_type::q8_1 ? k.quantize_q8_1
                                     : act == ggml_type::q8_k ? k.quantize_q8_k
                                     : act == ggml_type::f16 ? k.quantize_f16
                                     : nullptr;
    auto convert = [&](int64_t t) {
        if (quantize) quantize(x + t * n_in, dst + size_t(t) * x_row, n_in);
        else quant::quantize_row(act, x + t * n_in, dst + size_t(t) * x_row, n_in);
    };
    if (n_tok == 1) convert(0);
    else pool.parallel_for(n_tok, convert);
    return scratch;
}

void matmul_prepared(thread_pool & pool, const kernel_table & k, ggml_type type, const void * w, int64_t n_out,
                     int64_t n_in, const void * xa, int64_t n_tok, float * y) {
    const matmul_part part{type, w, n_out, y};
    matmul_prepared_many(pool, k, &part, 1, n_in, xa, n_tok);
}

void matmul_prepared_many(thread_pool & pool, const kernel_table & k, const matmul_part * parts, int n_parts,
                          int64_t n_in, const void * xa, int64_t n_tok) {
    TM_CHECK(n_parts >= 1 && n_parts <= k_matmul_max_parts, invalid_argument, "matmul: 1 to 4 weights per job");
    TM_CHECK(n_tok >= 1 && n_in >= 1, invalid_argument, "matmul: empty dimensions");
    const ggml_type act = quant::activation_type(parts[0].type);
    const bool shares = n_tok == 1;   // NOTE(decode-shares)
    struct plan {
        matmul_rows_fn fn;
        size_t w_row;
        int64_t chunk;
        int64_t first_task;   // tasks [first_task, next part's first_task) are this part's
    } plans[k_matmul_max_parts];
    int64_t n_tasks = 0;
    for (int i = 0; i < n_parts; ++i) {
        const matmul_part & p = parts[i];
        TM_CHECK(p.n_out >= 1, invalid_argument, "matmul: empty dimensions");
        TM_CHECK(n_in % quant::type_block_size(p.type) == 0, invalid_argument,
                 "matmul: n_in is not a multiple of the weight block size");
        TM_CHECK(quant::activation_type(p.type) == act, invalid_argument,
                 "matmul: weights of one job must take the same activation type");
        TM_CHECK(p.layout == weight_layout::gguf || p.n_out % quant::k_x16_rows == 0, invalid_argument,
                 "matmul: rows repacked 16 at a time come in multiples of 16");
        TM_CHECK(weight_layout_fits(p.layout, n_in), invalid_argument,
                 "matmul: Q8_0, Q4_0, IQ4_NL and Q5_0 rows repacked 16 at a time are a whole number of 64-weight block pairs");
        const size_t w_row = weight_row_bytes(p.type, p.layout, n_in);
        const int64_t chunk = rows_per_task(p.n_out, w_row, pool.n_threads(), n_tok, p.layout);
        plans[i] = {matmul_rows_for(k, p.type, p.layout), w_row, chunk, n_tasks};
        n_tasks += (p.n_out + chunk - 1) / chunk;
    }
    const size_t x_row = quant::row_bytes(act, n_in);
    const auto task_fn = [&](int64_t task) {
        int i = n_parts - 1;
        while (plans[i].first_task > task) --i;
        const matmul_part & p = parts[i];
        const plan & pl = plans[i];
        const int64_t r0 = (task - pl.first_task) * pl.chunk;
        const int64_t r1 = r0 + pl.chunk < p.n_out ? r0 + pl.chunk : p.n_out;
        pl.fn(p.w, pl.w_row, xa, x_row, n_tok, n_in, r0, r1, p.y, p.n_out);
    };
    if (shares) pool.parallel_for_shares(n_tasks, task_fn);
    else pool.parallel_for(n_tasks, task_fn);
}

void matmul(thread_pool & pool, const kernel_table & k, ggml_type type, const void * w, int64_t n_out,
            int64_t n_in, const float * x, int64_t n_tok, float * y, void * scratch, size_t scratch_bytes) {
    TM_CHECK(n_out >= 1, invalid_argument, "matmul: empty dimensions");
    matmul_rows_for(k, type);   // an unsupported type throws before any work
    const void * xa = matmul_prepare(pool, k, type, n_in, x, n_tok, scratch, scratch_bytes);
    matmul_prepared(pool, k, type, w, n_out, n_in, xa, n_tok, y);
}

} // namespace tmill::kernels
