// GGUF v2/v3 reader. NOTE(gguf): every length, count and offset read from the file is checked against
// the bytes that remain before it is used, so a hostile file can neither read out of bounds nor make the
// reader allocate more than a small multiple of the file size. Strings and array payloads are views into
// the read-only mapping; the file object must outlive them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/mmap.h"
#include "gguf/ggml-types.h"

namespace tmill::gguf {

enum class value_type : uint32_t {
    u8 = 0, i8 = 1, u16 = 2, i16 = 3, u32 = 4, i32 = 5, f32 = 6, boolean = 7,
    string = 8, array = 9, u64 = 10, i64 = 11, f64 = 12,
};

const char * value_type_name(value_type type);

// One metadata value. Scalars are widened into u/i/f; strings are views; arrays keep their element
// type and their elements (nested arrays allowed).
struct value {
    value_type type = value_type::u8;
    uint64_t u = 0;              // u8/u16/u32/u64/boolean
    int64_t i = 0;               // i8/i16/i32/i64
    double f = 0;                // f32/f64
    std::string_view str;        // string
    value_type elem_type = value_type::u8;  // array
    std::vector<value> elems;    // array (elements; nested arrays recurse)
};

struct kv {
    std::string_view key;
    value val;
};

struct tensor_info {
    std::string_view name;
    uint32_t n_dims = 0;
    int64_t ne[4] = {1, 1, 1, 1};  // elements per dimension, ne[0] fastest-varying (ggml order)
    ggml_type type = ggml_type::f32;
    uint64_t offset = 0;           // relative to the data section start
    uint64_t n_bytes = 0;          // size of the tensor's data
    const uint8_t * data = nullptr;  // into the mapping
};

class file {
public:
    // Opens and fully validates `path`. Throws tmill::error (io, gguf_invalid, gguf_unsupported) whose
    // message starts with the path and says what is wrong.
    static std::unique_ptr<file> open(const std::string & path);
    ~file();

    file(const file &) = delete;
    file & operator=(const file &) = delete;

    const std::string & path() const { return path_; }
    uint32_t version() const { return version_; }
    uint64_t alignment() const { return alignment_; }

    const std::vector<kv> & metadata() const { return kvs_; }
    const kv * find(std::string_view key) const;

    // Typed getters: nullopt when absent; tmill::error(gguf_invalid) naming the key when present with an
    // incompatible type. Integer getters accept any integer type whose value fits.
    std::optional<std::string_view> get_string(std::string_view key) const;
    std::optional<uint64_t> get_u64(std::string_view key) const;
    std::optional<uint32_t> get_u32(std::string_view key) const;
    std::optional<int64_t> get_i64(std::string_view key) const;
    std::optional<double> get_f64(std::string_view key) const;
    std::optional<float> get_f32(std::string_view key) const;
    std::optional<bool> get_bool(std::string_view key) const;
    // Arrays (element type checked; integer arrays accept any integer element type that fits).
    std::optional<std::vector<std::string_view>> get_string_array(std::string_view key) const;
    std::optional<std::vector<float>> get_f32_array(std::string_view key) const;
    std::optional<std::vector<int32_t>> get_i32_array(std::string_view key) const;

    const std::vector<tensor_info> & tensors() const { return tensors_; }
    const tensor_info * find_tensor(std::string_view name) const;

    const uint8_t * bytes() const { return base_; }
    size_t size() const { return size_; }
    // Absolute file offset of the data section (aligned end of the tensor infos).
    uint64_t data_offset() const { return data_offset_; }

private:
    file() = default;
    void parse();
    [[noreturn]] void fail_type(const kv & entry, const char * expected) const;

    mapped_file map_;                 // owns the bytes every view below points into

    std::string path_;
    const uint8_t * base_ = nullptr;  // the whole mapping (read-only)
    size_t size_ = 0;
    uint32_t version_ = 0;
    uint64_t alignment_ = 32;
    uint64_t data_offset_ = 0;
    std::vector<kv> kvs_;
    std::vector<tensor_info> tensors_;
    std::unordered_map<std::string_view, size_t> kv_index_;      // key -> index into kvs_
    std::unordered_map<std::string_view, size_t> tensor_index_;  // name -> index into tensors_
};

} // namespace tmill::gguf
