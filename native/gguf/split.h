// A model stored as one GGUF file or split into shards (`name-00001-of-00003.gguf`, llama.cpp's
// gguf-split layout): the first shard holds the metadata, every shard holds a part of the tensors and the
// keys split.no (its 0-based index), split.count and split.tensors.count (the tensor total). Opened from the
// first shard's path; the others are found by name beside it and checked against it, so a missing,
// foreign or misnumbered shard is an error naming the file, never a model with holes.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gguf/gguf.h"

namespace tmill::gguf {

class shard_set {
public:
    // Opens `path` and, when it is the first shard of a split model, its siblings. Throws tmill::error
    // (io, gguf_invalid, gguf_unsupported) naming the file at fault.
    static std::unique_ptr<shard_set> open(const std::string & path);

    // The first shard: metadata, tokenizer, path.
    const file & first() const { return *shards_.front(); }
    size_t count() const { return shards_.size(); }
    const file & shard(size_t i) const { return *shards_[i]; }

    // Every tensor of every shard, in shard order; data pointers point into each shard's mapping.
    const std::vector<tensor_info> & tensors() const { return tensors_; }
    const tensor_info * find_tensor(std::string_view name) const;

private:
    shard_set() = default;

    std::vector<std::unique_ptr<file>> shards_;   // own the mappings every tensor view points into
    std::vector<tensor_info> tensors_;
    std::unordered_map<std::string_view, size_t> tensor_index_;
};

// The path of shard `index` (0-based) of `count`, from the first shard's path (`<prefix>-00001-of-NNNNN.gguf`);
// empty when `first_path` does not follow that pattern for `count`.
std::string shard_path(const std::string & first_path, uint32_t index, uint32_t count);

} // namespace tmill::gguf
