// K/V memory of the paged cache, addressed by (layer, physical block, slot). Allocated once at engine
// creation from a byte budget; the block pool (native/kv) decides which blocks a sequence owns.
// Stored as F16, like llama.cpp's default cache type, which halves memory and keeps our attention
// inputs bit-identical to llama.cpp's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "model/hparams.h"

namespace tmill {

constexpr int32_t k_kv_block_size = 16;   // tokens per block

class kv_storage {
public:
    // Sizes the pool to as many blocks as fit in `budget_bytes` (at least one; throws out_of_memory when
    // the budget cannot hold one block or the allocation fails).
    kv_storage(const hparams & hp, size_t budget_bytes);

    int32_t n_blocks() const { return n_blocks_; }
    size_t bytes_per_block() const { return bytes_per_block_; }
    int64_t row_elems() const { return row_elems_; }

    // Row of one token's keys/values in a layer: (n_head_kv, head_dim) F16.
    uint16_t * k_row(uint32_t layer, int32_t block, int32_t slot) { return k_.data() + offset(layer, block, slot); }
    uint16_t * v_row(uint32_t layer, int32_t block, int32_t slot) { return v_.data() + offset(layer, block, slot); }
    const uint16_t * k_row(uint32_t layer, int32_t block, int32_t slot) const { return k_.data() + offset(layer, block, slot); }
    const uint16_t * v_row(uint32_t layer, int32_t block, int32_t slot) const { return v_.data() + offset(layer, block, slot); }

    // Copies every layer's K/V of block `src` into block `dst` (copy-on-write of a shared partial block).
    void copy_block(int32_t src, int32_t dst);

private:
    size_t offset(uint32_t layer, int32_t block, int32_t slot) const {
        return ((size_t(layer) * size_t(n_blocks_) + size_t(block)) * k_kv_block_size + size_t(slot)) * size_t(row_elems_);
    }

    uint32_t n_layer_ = 0;
    int64_t row_elems_ = 0;         // n_head_kv * head_dim
    size_t bytes_per_block_ = 0;    // K and V, all layers
    int32_t n_blocks_ = 0;
    std::vector<uint16_t> k_;       // (n_layer, n_blocks, block_size, n_head_kv, head_dim) F16
    std::vector<uint16_t> v_;       // (n_layer, n_blocks, block_size, n_head_kv, head_dim) F16
};

} // namespace tmill
