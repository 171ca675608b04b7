#include "gguf/split.h"

#include <cstdio>

#include "base/error.h"

namespace tmill::gguf {

namespace {

std::string shard_suffix(uint32_t index, uint32_t count) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "-%05u-of-%05u.gguf", index + 1, count);
    return buf;
}

// split.no and split.count as this shard states them; a file without them is a whole model (0 of 1).
void split_keys(const file & f, uint32_t & no, uint32_t & count) {
    const auto c = f.get_u32("split.count");
    const auto n = f.get_u32("split.no");
    count = c.value_or(1);
    no = n.value_or(0);
    TM_CHECK(count >= 1, gguf_invalid, f.path() + ": split.count is 0");
    TM_CHECK(no < count, gguf_invalid,
             f.path() + ": split.no " + std::to_string(no) + " is not below split.count " + std::to_string(count));
}

} // namespace

std::string shard_path(const std::string & first_path, uint32_t index, uint32_t count) {
    const std::string first = shard_suffix(0, count);
    if (first_path.size() <= first.size() || first_path.compare(first_path.size() - first.size(), first.size(), first) != 0) {
        return {};
    }
    return first_path.substr(0, first_path.size() - first.size()) + shard_suffix(index, count);
}

std::unique_ptr<shard_set> shard_set::open(const std::string & path) {
    std::unique_ptr<shard_set> set(new shard_set());
    set->shards_.push_back(file::open(path));
    uint32_t no = 0, count = 1;
    split_keys(set->first(), no, count);
    TM_CHECK(no == 0, gguf_invalid,
             path + ": is shard " + std::to_string(no + 1) + " of " + std::to_string(count) +
             " of a split model; pass the first one (" + shard_suffix(0, count).substr(1) + ")");
    if (count > 1) {
        TM_CHECK(!shard_path(path, 0, count).empty(), gguf_invalid,
                 path + ": is the first of " + std::to_string(count) + " shards, but its name does not end in '" +
                 shard_suffix(0, count) + "', so the other shards cannot be found");
        for (uint32_t i = 1; i < count; ++i) {
            const std::string p = shard_path(path, i, count);
            try {
                set->shards_.push_back(file::open(p));
            } catch (const error & e) {
                if (e.code() != error_code::io) throw;
                throw error(error_code::io, path + ": shard " + std::to_string(i + 1) + " of " + std::to_string(count) +
                                            " cannot be opened: " + e.what());
            }
            uint32_t shard_no = 0, shard_count = 1;
            split_keys(*set->shards_.back(), shard_no, shard_count);
            TM_CHECK(shard_count == count && shard_no == i, gguf_invalid,
                     p + ": is not shard " + std::to_string(i + 1) + " of " + std::to_string(count) + " (it says split.no " +
                     std::to_string(shard_no) + ", split.count " + std::to_string(shard_count) + ")");
        }
    }
    for (const auto & shard : set->shards_) {
        for (const tensor_info & t : shard->tensors()) {
            const auto [it, fresh] = set->tensor_index_.emplace(t.name, set->tensors_.size());
            TM_CHECK(fresh, gguf_invalid,
                     shard->path() + ": tensor '" + std::string(t.name) + "' is also in an earlier shard");
            set->tensors_.push_back(t);
        }
    }
    if (count > 1) {
        const auto total = set->first().get_u64("split.tensors.count");
        TM_CHECK(total.has_value(), gguf_invalid, path + ": split model without split.tensors.count");
        TM_CHECK(*total == set->tensors_.size(), gguf_invalid,
                 path + ": split.tensors.count is " + std::to_string(*total) + " but the " + std::to_string(count) +
                 " shards hold " + std::to_string(set->tensors_.size()) + " tensors");
    }
    return set;
}

const tensor_info * shard_set::find_tensor(std::string_view name) const {
    const auto it = tensor_index_.find(name);
    return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

} // namespace tmill::gguf
