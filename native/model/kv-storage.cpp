#include "model/kv-storage.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <new>

#include "base/error.h"

namespace tmill {

kv_storage::kv_storage(const hparams & hp, size_t budget_bytes)
    : n_layer_(hp.n_layer), row_elems_(int64_t(hp.n_head_kv) * hp.head_dim) {
    bytes_per_block_ = size_t(2) * n_layer_ * k_kv_block_size * size_t(row_elems_) * sizeof(uint16_t);
    const size_t n = budget_bytes / bytes_per_block_;
    TM_CHECK(n >= 1, out_of_memory,
             "kvCacheMemory of " + std::to_string(budget_bytes) + " bytes cannot hold one KV block of " +
             std::to_string(bytes_per_block_) + " bytes (" + std::to_string(k_kv_block_size) + " tokens)");
    n_blocks_ = int32_t(std::min<size_t>(n, size_t(std::numeric_limits<int32_t>::max() / 2)));
    const size_t elems = size_t(n_layer_) * size_t(n_blocks_) * k_kv_block_size * size_t(row_elems_);
    try {
        k_.assign(elems, 0);
        v_.assign(elems, 0);
    } catch (const std::bad_alloc &) {
        throw error(error_code::out_of_memory,
                    "could not allocate " + std::to_string(2 * elems * sizeof(uint16_t)) + " bytes for the KV cache");
    }
}

void kv_storage::copy_block(int32_t src, int32_t dst) {
    const size_t block_elems = size_t(k_kv_block_size) * size_t(row_elems_);
    for (uint32_t il = 0; il < n_layer_; ++il) {
        std::memcpy(k_row(il, dst, 0), k_row(il, src, 0), block_elems * sizeof(uint16_t));
        std::memcpy(v_row(il, dst, 0), v_row(il, src, 0), block_elems * sizeof(uint16_t));
    }
}

} // namespace tmill
