#include "model/repack.h"

#include "quant/q4-k-x16.h"

#include <algorithm>
#include <cstdlib>
#include <system_error>
#include <thread>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

namespace tmill {

void aligned_free::operator()(uint8_t * p) const { std::free(p); }

namespace {

constexpr size_t k_repack_align = 64;   // a cache line: the kernels' 64-byte loads never straddle two

bool repackable(const weight & v) {
    return v.present() && v.type == ggml_type::q4_k && v.layout == kernels::weight_layout::gguf && v.n_rows % quant::k_x16_rows == 0;
}

// Drops the mapping's pages that lie wholly inside [p, p + n) from the process.
void release_pages(const uint8_t * p, size_t n) {
    const uintptr_t page = uintptr_t(sysconf(_SC_PAGESIZE));
    const uintptr_t first = (uintptr_t(p) + page - 1) / page * page, last = (uintptr_t(p) + n) / page * page;
    if (last > first) madvise(reinterpret_cast<void *>(first), last - first, MADV_DONTNEED);
}

} // namespace

repacked_weights repack_weights(model_weights & w, const kernels::kernel_table & k) {
    repacked_weights out;
    if (!k.q4_k_x16) return out;
    std::vector<weight *> todo;
    for (layer_weights & l : w.layers)
        for (weight * v : {&l.wq, &l.wk, &l.wv, &l.wo, &l.w_gate, &l.w_up, &l.w_down})
            if (repackable(*v)) todo.push_back(v);
    if (!w.tied_output && repackable(w.output)) todo.push_back(&w.output);
    for (weight * v : todo) out.size += size_t(v->n_rows) * quant::q4_k_x16_row_bytes(v->n_cols);
    if (out.size == 0) return out;
    out.bytes.reset(static_cast<uint8_t *>(std::aligned_alloc(k_repack_align, (out.size + k_repack_align - 1) / k_repack_align * k_repack_align)));
    if (!out.bytes) {
        out.size = 0;
        return out;
    }
    // Every 16-row group of every weight, cut between the threads: the copy's pages are first touched and the
    // file's pages read here, about a second for a 1.5B Q4_K_M model on one EPYC core.
    struct job {
        const uint8_t * src;
        size_t src_row_bytes, dst_row_bytes;
        int64_t nb;
        uint8_t * dst;
        int64_t first_group;   // this weight's groups are [first_group, next job's first_group) of all groups
    };
    std::vector<job> jobs;
    int64_t n_groups = 0;
    uint8_t * dst = out.bytes.get();
    for (const weight * v : todo) {
        const size_t dst_row_bytes = quant::q4_k_x16_row_bytes(v->n_cols);
        jobs.push_back({v->data, v->row_bytes, dst_row_bytes, v->n_cols / quant::qk_k, dst, n_groups});
        n_groups += v->n_rows / quant::k_x16_rows;
        dst += size_t(v->n_rows) * dst_row_bytes;
    }
    const auto pack_groups = [&](int64_t g0, int64_t g1) {
        size_t j = 0;
        for (int64_t g = g0; g < g1; ++g) {
            while (j + 1 < jobs.size() && jobs[j + 1].first_group <= g) ++j;
            const job & jb = jobs[j];
            const size_t row = size_t(g - jb.first_group) * quant::k_x16_rows;
            quant::q4_k_x16_pack(jb.src + row * jb.src_row_bytes, jb.src_row_bytes, jb.nb,
                                 reinterpret_cast<quant::block_q4_k_x16 *>(jb.dst + row * jb.dst_row_bytes));
        }
    };
    const int n_threads = int(std::clamp<unsigned>(std::thread::hardware_concurrency(), 1u, 16u));
    const auto bound = [&](int i) { return n_groups * i / n_threads; };
    std::vector<std::thread> threads;
    int started = 1;   // range 0 is this thread's; ranges a thread could not be started for run here too
    for (; started < n_threads; ++started) {
        try {
            threads.emplace_back(pack_groups, bound(started), bound(started + 1));
        } catch (const std::system_error &) {
            break;
        }
    }
    pack_groups(0, bound(1));
    pack_groups(bound(started), n_groups);
    for (std::thread & t : threads) t.join();
    for (size_t i = 0; i < todo.size(); ++i) {
        weight & v = *todo[i];
        release_pages(v.data, size_t(v.n_rows) * v.row_bytes);
        v.data = jobs[i].dst;
        v.row_bytes = jobs[i].dst_row_bytes;
        v.layout = kernels::weight_layout::q4_k_x16;
    }
    return out;
}

} // namespace tmill
