#include "model/repack.h"

#include "kernels/matmul.h"
#include "quant/q4-0-x16.h"
#include "quant/q4-1-x16.h"
#include "quant/q4-k-x16.h"
#include "quant/q5-0-x16.h"
#include "quant/q6-k-x16.h"
#include "quant/q8-0-x16.h"

#include <algorithm>
#include <system_error>
#include <thread>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

namespace tmill {

void unmap_pages::operator()(uint8_t * p) const { munmap(p, length); }

namespace {

// NOTE(huge-pages): the copy is one anonymous mapping that starts on, and fills whole, 2 MiB x86-64 huge pages,
// advised for transparent huge pages before its first touch, so that where the system grants them (THP "always",
// or "madvise" as on the AMD EPYC below) a decode step streams the weights through 512 times fewer page
// translations. On that AMD EPYC (Zen 4), `avx512`, the synthetic TinyLlama-shape Q8_0 model repacked, through
// Engine, both loads in one process, 16 alternated decodes of 32 tokens: 2 threads 43.5 -> 47.4 tok/s (medians;
// pairwise ratios 1.02-1.15 but one), 1 thread 23.8 -> 26.3; a one-token 2048 -> 5632 matmul streaming from memory
// on one thread 23-25 -> 32-35 G multiply-adds a second. Without them the pages stay 4 KiB and nothing else
// changes. (Its own mapping, not the allocator's: a copy below malloc's mmap threshold would share the heap's pages
// and outlive the model there.)
constexpr size_t k_huge_page = size_t(2) << 20;

// An anonymous read-write mapping of `length` bytes (a multiple of k_huge_page) on a huge-page boundary, advised
// for huge pages; null when the system refuses the memory.
uint8_t * map_huge_pages(size_t length) {
    const size_t span = length + k_huge_page;
    void * p = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return nullptr;
    const uintptr_t start = uintptr_t(p), aligned = (start + k_huge_page - 1) / k_huge_page * k_huge_page;
    if (aligned > start) munmap(p, aligned - start);
    const uintptr_t tail = aligned + length, end = start + span;
    if (end > tail) munmap(reinterpret_cast<void *>(tail), end - tail);
#ifdef MADV_HUGEPAGE
    madvise(reinterpret_cast<void *>(aligned), length, MADV_HUGEPAGE);
#endif
    return reinterpret_cast<uint8_t *>(aligned);
}

// The layout k's kernels prefer for v's rows (gguf: keep the file's).
kernels::weight_layout preferred_layout(const weight & v, const kernels::kernel_table & k) {
    if (!v.present() || v.layout != kernels::weight_layout::gguf || v.n_rows % quant::k_x16_rows != 0) return kernels::weight_layout::gguf;
    kernels::weight_layout layout = kernels::weight_layout::gguf;
    if (v.type == ggml_type::q4_k && k.q4_k_x16) layout = kernels::weight_layout::q4_k_x16;
    if (v.type == ggml_type::q6_k && k.q6_k_x16) layout = kernels::weight_layout::q6_k_x16;
    if (v.type == ggml_type::q8_0 && k.q8_0_x16) layout = kernels::weight_layout::q8_0_x16;
    if (v.type == ggml_type::q4_1 && k.q4_1_x16) layout = kernels::weight_layout::q4_1_x16;
    if ((v.type == ggml_type::q4_0 || v.type == ggml_type::iq4_nl) && k.q4_0_x16) layout = kernels::weight_layout::q4_0_x16;
    if (v.type == ggml_type::q5_0 && k.q5_0_x16) layout = kernels::weight_layout::q5_0_x16;
    return kernels::weight_layout_fits(layout, v.n_cols) ? layout : kernels::weight_layout::gguf;
}

size_t repacked_row_bytes(const weight & v, kernels::weight_layout layout) {
    return kernels::weight_row_bytes(v.type, layout, v.n_cols);
}

// Group g (16 rows) of v repacked into layout at dst (the copy of row 0).
void repack_group(const weight & v, kernels::weight_layout layout, int64_t g, uint8_t * dst) {
    const size_t row = size_t(g) * quant::k_x16_rows;
    const uint8_t * src = v.data + row * v.row_bytes;
    uint8_t * out = dst + row * repacked_row_bytes(v, layout);
    if (layout == kernels::weight_layout::q4_k_x16)
        quant::q4_k_x16_pack(src, v.row_bytes, v.n_cols / quant::qk_k, reinterpret_cast<quant::block_q4_k_x16 *>(out));
    else if (layout == kernels::weight_layout::q6_k_x16)
        quant::q6_k_x16_pack(src, v.row_bytes, v.n_cols / quant::qk_k, reinterpret_cast<quant::block_q6_k_x16 *>(out));
    else if (layout == kernels::weight_layout::q4_0_x16)
        quant::q4_0_x16_pack(src, v.row_bytes, v.n_cols / quant::qk4_0, reinterpret_cast<quant::block_q4_0_x16 *>(out));
    else if (layout == kernels::weight_layout::q5_0_x16)
        quant::q5_0_x16_pack(src, v.row_bytes, v.n_cols / quant::qk5_0, reinterpret_cast<quant::block_q5_0_x16 *>(out));
    else if (layout == kernels::weight_layout::q4_1_x16)
        quant::q4_1_x16_pack(src, v.row_bytes, v.n_cols / quant::qk4_1, reinterpret_cast<quant::block_q4_1_x16 *>(out));
    else
        quant::q8_0_x16_pack(src, v.row_bytes, v.n_cols / quant::qk8_0, reinterpret_cast<quant::block_q8_0_x16 *>(out));
}

// Drops the mapping's pages that lie wholly inside [p, p + n) from the process.
void release_pages(const uint8_t * p, size_t n) {
    const uintptr_t page = uintptr_t(sysconf(_SC_PAGESIZE));
    const uintptr_t first = (uintptr_t(p) + page - 1) / page * page, last = (uintptr_t(p) + n) / page * page;
    if (last > first) madvise(reinterpret_cast<void *>(first), last - first, MADV_DONTNEED);
}

// run(i0, i1) over [0, n) cut into one range per core, each on a thread of its own but the first (run here, as
// are the ranges of threads that could not be started).
template <typename Run>
void in_parallel(int64_t n, const Run & run) {
    const int n_threads = int(std::clamp<unsigned>(std::thread::hardware_concurrency(), 1u, 16u));
    const auto bound = [&](int i) { return n * i / n_threads; };
    std::vector<std::thread> threads;
    int started = 1;
    for (; started < n_threads; ++started) {
        try {
            threads.emplace_back(run, bound(started), bound(started + 1));
        } catch (const std::system_error &) {
            break;
        }
    }
    run(0, bound(1));
    run(bound(started), n);
    for (std::thread & t : threads) t.join();
}

// Bytes of all the model's weight views, the token embeddings included (an output tied to them counted once).
uint64_t weight_bytes(const model_weights & w) {
    uint64_t total = 0;
    for (const byte_range & r : decode_read_set(w)) total += r.bytes;
    if (!w.tied_output && w.tok_embd.present()) total += uint64_t(w.tok_embd.n_rows) * w.tok_embd.row_bytes;
    return total;
}

} // namespace

repacked_weights repack_weights(model_weights & w, const kernels::kernel_table & k, uint64_t memory_limit) {
    repacked_weights out;
    struct job {
        weight * v;
        kernels::weight_layout layout;
    };
    std::vector<job> todo;
    const auto consider = [&](weight & v) {
        const kernels::weight_layout layout = preferred_layout(v, k);
        if (layout != kernels::weight_layout::gguf) todo.push_back({&v, layout});
    };
    for (layer_weights & l : w.layers)
        for (weight * v : {&l.wq, &l.wk, &l.wv, &l.wo, &l.w_gate, &l.w_up, &l.w_down}) consider(*v);
    if (!w.tied_output) consider(w.output);
    for (const job & j : todo) {
        out.size += size_t(j.v->n_rows) * repacked_row_bytes(*j.v, j.layout);
        out.replaced += size_t(j.v->n_rows) * j.v->row_bytes;
    }
    const uint64_t limit = memory_limit ? memory_limit : uint64_t(sysconf(_SC_PHYS_PAGES)) * uint64_t(sysconf(_SC_PAGESIZE));
    if (out.size == 0 || weight_bytes(w) - out.replaced + out.size > limit) return {};
    const size_t length = (out.size + k_huge_page - 1) / k_huge_page * k_huge_page;
    out.bytes = std::unique_ptr<uint8_t[], unmap_pages>(map_huge_pages(length), unmap_pages{length});
    if (!out.bytes) return {};
    // Weight by weight, so that beside the copy the file's pages of one weight at most are resident; its 16-row
    // groups cut between the threads (the copy's pages are first touched and the file's pages read here: one
    // thread took 0.7-1.6 s for a 1.5B Q4_K_M model on the EPYC). Every weight's copy starts on a cache line
    // (16 rows of either layout are a whole number of them).
    uint8_t * dst = out.bytes.get();
    for (const job & j : todo) {
        weight & v = *j.v;
        in_parallel(v.n_rows / quant::k_x16_rows, [&](int64_t g0, int64_t g1) {
            for (int64_t g = g0; g < g1; ++g) repack_group(v, j.layout, g, dst);
        });
        release_pages(v.data, size_t(v.n_rows) * v.row_bytes);
        const size_t row_bytes = repacked_row_bytes(v, j.layout);
        v.data = dst;
        v.row_bytes = row_bytes;
        v.layout = j.layout;
        dst += size_t(v.n_rows) * row_bytes;
    }
    return out;
}

} // namespace tmill
