// GGUF v2/v3 reader: header, metadata, tensor infos and the data section of a read-only mapping.
// NOTE(gguf): the parser only moves forward through [base, base + size) and every count, length and
// offset it reads is compared with the bytes that remain BEFORE it is used to read or to reserve, so
// a hostile file fails with tmill::error(gguf_invalid) naming the key or tensor, never reads out of
// bounds, and never makes us reserve more elements than the remaining bytes could encode.
#include "gguf/gguf.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <limits>

#include "base/error.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the GGUF reader assumes a little-endian host (GGUF files are little-endian)"
#endif

namespace tmill::gguf {

namespace {

constexpr uint32_t k_max_dims = 4;
// Nested arrays recurse; a cap keeps a file of nested array headers from exhausting the stack.
constexpr int k_max_array_depth = 8;
// Every array element becomes one `value` (~100 bytes), so a file of u8 arrays could otherwise make
// us allocate ~100x its size. Real vocabularies need ~1.5M elements (262k tokens x 3 arrays + merges).
constexpr uint64_t k_max_array_elems_total = uint64_t(1) << 23;
// Smallest encodings, used to bound counts against the remaining bytes before reserving.
constexpr uint64_t k_min_kv_bytes = 8 + 4 + 1;               // key length, type, a u8 value
constexpr uint64_t k_min_tensor_info_bytes = 8 + 4 + 8 + 4 + 8;  // name length, n_dims, 1 dim, type, offset

bool value_type_known(uint32_t t) { return t <= uint32_t(value_type::f64); }

// Encoded size of a fixed-size scalar; 0 for string and array.
uint64_t scalar_size(value_type t) {
    switch (t) {
        case value_type::u8: case value_type::i8: case value_type::boolean: return 1;
        case value_type::u16: case value_type::i16: return 2;
        case value_type::u32: case value_type::i32: case value_type::f32: return 4;
        case value_type::u64: case value_type::i64: case value_type::f64: return 8;
        case value_type::string: case value_type::array: return 0;
    }
    return 0;
}

uint64_t min_encoded_size(value_type t) {
    if (t == value_type::string) return 8;      // length
    if (t == value_type::array) return 4 + 8;   // element type, count
    return scalar_size(t);
}

bool is_unsigned(value_type t) {
    return t == value_type::u8 || t == value_type::u16 || t == value_type::u32 || t == value_type::u64;
}

bool is_signed(value_type t) {
    return t == value_type::i8 || t == value_type::i16 || t == value_type::i32 || t == value_type::i64;
}

// Strict UTF-8: no overlong forms, no surrogates, nothing above U+10FFFF.
bool valid_utf8(std::string_view s) {
    const auto * p = reinterpret_cast<const uint8_t *>(s.data());
    const size_t n = s.size();
    size_t i = 0;
    while (i < n) {
        const uint8_t c = p[i];
        if (c < 0x80) { ++i; continue; }
        size_t len;
        uint32_t cp;
        if ((c & 0xE0) == 0xC0) { len = 2; cp = c & 0x1F; }
        else if ((c & 0xF0) == 0xE0) { len = 3; cp = c & 0x0F; }
        else if ((c & 0xF8) == 0xF0) { len = 4; cp = c & 0x07; }
        else return false;
        if (n - i < len) return false;
        for (size_t k = 1; k < len; ++k) {
            if ((p[i + k] & 0xC0) != 0x80) return false;
            cp = (cp << 6) | (p[i + k] & 0x3F);
        }
        if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000)) return false;
        if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
        i += len;
    }
    return true;
}

// A name for error messages: printable ASCII kept, other bytes as \xNN, long names cut.
std::string printable(std::string_view s) {
    static const char * hex = "0123456789abcdef";
    std::string out;
    const size_t limit = 96;
    for (size_t i = 0; i < s.size() && i < limit; ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c >= 0x20 && c < 0x7F && c != '\\') {
            out += char(c);
        } else {
            out += "\\x";
            out += hex[c >> 4];
            out += hex[c & 15];
        }
    }
    if (s.size() > limit) out += "...";
    return out;
}

std::string check_name(std::string_view s) {
    if (s.empty()) return "is empty";
    if (s.find('\0') != std::string_view::npos) return "contains a NUL byte";
    if (!valid_utf8(s)) return "is not valid UTF-8";
    return {};
}

// The forward-only cursor; `ctx` names what is being read ("metadata key 'x'") for error messages.
class parser {
public:
    parser(const std::string & path, const uint8_t * base, size_t size) : path_(path), base_(base), size_(size) {}

    std::string ctx;
    uint64_t n_array_elems = 0;  // all array elements read so far (see k_max_array_elems_total)

    size_t pos() const { return pos_; }
    uint64_t remaining() const { return size_ - pos_; }

    [[noreturn]] void fail(error_code code, const std::string & what) const {
        throw error(code, path_ + ": " + (ctx.empty() ? std::string() : ctx + ": ") + what);
    }

    // pre: none; fails unless n bytes remain at the cursor.
    void need(uint64_t n, const char * what) const {
        if (n > remaining()) {
            fail(error_code::gguf_invalid, std::string("truncated: ") + what + " needs " + std::to_string(n) +
                 " bytes at offset " + std::to_string(pos_) + " but only " + std::to_string(remaining()) +
                 " remain (file size " + std::to_string(size_) + ")");
        }
    }

    template <typename T>
    T read(const char * what) {
        need(sizeof(T), what);
        T v;
        std::memcpy(&v, base_ + pos_, sizeof(T));
        pos_ += sizeof(T);
        return v;
    }

    std::string_view read_string(const char * what) {
        const uint64_t len = read<uint64_t>(what);
        if (len > remaining()) {
            fail(error_code::gguf_invalid, std::string(what) + " length " + std::to_string(len) + " exceeds the " +
                 std::to_string(remaining()) + " bytes left in the file (at offset " + std::to_string(pos_) + ")");
        }
        std::string_view s(reinterpret_cast<const char *>(base_ + pos_), size_t(len));
        pos_ += size_t(len);
        return s;
    }

    value_type read_value_type(const char * what) {
        const uint32_t t = read<uint32_t>(what);
        if (!value_type_known(t)) {
            fail(error_code::gguf_invalid, std::string("unknown ") + what + " " + std::to_string(t) + " (expected 0..12)");
        }
        return value_type(t);
    }

    value read_value(value_type type, int depth) {
        value v;
        v.type = type;
        switch (type) {
            case value_type::u8:  v.u = read<uint8_t>("u8 value"); break;
            case value_type::u16: v.u = read<uint16_t>("u16 value"); break;
            case value_type::u32: v.u = read<uint32_t>("u32 value"); break;
            case value_type::u64: v.u = read<uint64_t>("u64 value"); break;
            case value_type::i8:  v.i = read<int8_t>("i8 value"); break;
            case value_type::i16: v.i = read<int16_t>("i16 value"); break;
            case value_type::i32: v.i = read<int32_t>("i32 value"); break;
            case value_type::i64: v.i = read<int64_t>("i64 value"); break;
            case value_type::f32: v.f = read<float>("f32 value"); break;
            case value_type::f64: v.f = read<double>("f64 value"); break;
            case value_type::boolean: {
                const uint8_t b = read<uint8_t>("bool value");
                if (b > 1) fail(error_code::gguf_invalid, "bool value " + std::to_string(b) + " is not 0 or 1");
                v.u = b;
                break;
            }
            case value_type::string: v.str = read_string("string value"); break;
            case value_type::array: read_array(v, depth); break;
        }
        return v;
    }

private:
    void read_array(value & v, int depth) {
        v.elem_type = read_value_type("array element type");
        if (v.elem_type == value_type::array && depth + 1 >= k_max_array_depth) {
            fail(error_code::gguf_invalid, "arrays nested deeper than " + std::to_string(k_max_array_depth) + " levels");
        }
        const uint64_t count = read<uint64_t>("array count");
        const uint64_t min_size = min_encoded_size(v.elem_type);
        if (count > remaining() / min_size) {
            fail(error_code::gguf_invalid, "array count " + std::to_string(count) + " of " +
                 value_type_name(v.elem_type) + " needs at least " + std::to_string(min_size) +
                 " bytes each but only " + std::to_string(remaining()) + " bytes remain (at offset " +
                 std::to_string(pos_) + ")");
        }
        n_array_elems += count;
        if (n_array_elems > k_max_array_elems_total) {
            fail(error_code::gguf_invalid, "metadata arrays hold more than " + std::to_string(k_max_array_elems_total) +
                 " elements in total");
        }
        v.elems.reserve(size_t(count));
        for (uint64_t k = 0; k < count; ++k) v.elems.push_back(read_value(v.elem_type, depth + 1));
    }

    const std::string & path_;
    const uint8_t * base_;  // (size_) bytes of the mapping
    size_t size_;
    size_t pos_ = 0;
};

std::string dims_string(const tensor_info & t) {
    std::string s = "[";
    for (uint32_t d = 0; d < t.n_dims; ++d) {
        if (d) s += ", ";
        s += std::to_string(t.ne[d]);
    }
    return s + "]";
}

} // namespace

const char * value_type_name(value_type type) {
    switch (type) {
        case value_type::u8: return "u8";
        case value_type::i8: return "i8";
        case value_type::u16: return "u16";
        case value_type::i16: return "i16";
        case value_type::u32: return "u32";
        case value_type::i32: return "i32";
        case value_type::f32: return "f32";
        case value_type::boolean: return "bool";
        case value_type::string: return "string";
        case value_type::array: return "array";
        case value_type::u64: return "u64";
        case value_type::i64: return "i64";
        case value_type::f64: return "f64";
    }
    return "unknown";
}

std::unique_ptr<file> file::open(const std::string & path) {
    std::unique_ptr<file> f(new file());
    f->path_ = path;
    f->map_ = mapped_file::open_read_only(path);
    f->base_ = f->map_.data();
    f->size_ = f->map_.size();
    f->parse();
    return f;
}

file::~file() = default;

void file::parse() {
    parser p(path_, base_, size_);

    // ---- header -------------------------------------------------------------------------------
    if (size_ == 0) p.fail(error_code::gguf_invalid, "file is empty (expected a GGUF header)");
    if (size_ < 4) {
        p.fail(error_code::gguf_invalid, "file is " + std::to_string(size_) + " bytes, too short for the GGUF magic");
    }
    if (std::memcmp(base_, "FUGG", 4) == 0) {
        p.fail(error_code::gguf_unsupported, "big-endian GGUF files are not supported (magic reads \"FUGG\")");
    }
    if (std::memcmp(base_, "GGUF", 4) != 0) {
        static const char * hex = "0123456789abcdef";
        std::string got;
        for (int k = 0; k < 4; ++k) {
            got += hex[base_[k] >> 4];
            got += hex[base_[k] & 15];
        }
        p.fail(error_code::gguf_invalid, "bad magic 0x" + got + " (expected \"GGUF\"); not a GGUF file");
    }
    p.read<uint32_t>("magic");
    version_ = p.read<uint32_t>("version");
    if ((version_ & 0xFFFF) == 0 && version_ != 0) {
        const uint32_t swapped = __builtin_bswap32(version_);
        if (swapped >= 1 && swapped <= 3) {
            p.fail(error_code::gguf_unsupported, "big-endian GGUF files are not supported (version field reads " +
                   std::to_string(version_) + ", byte-swapped " + std::to_string(swapped) + ")");
        }
    }
    if (version_ != 2 && version_ != 3) {
        p.fail(error_code::gguf_unsupported, "unsupported GGUF version " + std::to_string(version_) +
               " (supported: 2 and 3)");
    }
    p.ctx = "header";
    const uint64_t n_tensors = p.read<uint64_t>("tensor count");
    const uint64_t n_kv = p.read<uint64_t>("metadata count");
    if (n_kv > p.remaining() / k_min_kv_bytes) {
        p.fail(error_code::gguf_invalid, "metadata count " + std::to_string(n_kv) + " cannot fit in the " +
               std::to_string(p.remaining()) + " bytes left (each entry takes at least " +
               std::to_string(k_min_kv_bytes) + ")");
    }

    // ---- metadata -----------------------------------------------------------------------------
    kvs_.reserve(size_t(n_kv));
    kv_index_.reserve(size_t(n_kv));
    for (uint64_t i = 0; i < n_kv; ++i) {
        p.ctx = "metadata entry #" + std::to_string(i);
        kv entry;
        entry.key = p.read_string("key");
        const std::string bad = check_name(entry.key);
        if (!bad.empty()) p.fail(error_code::gguf_invalid, "key '" + printable(entry.key) + "' " + bad);
        p.ctx = "metadata key '" + std::string(entry.key) + "'";
        const value_type type = p.read_value_type("value type");
        entry.val = p.read_value(type, 0);
        if (!kv_index_.emplace(entry.key, kvs_.size()).second) {
            p.fail(error_code::gguf_invalid, "duplicate key (also at entry #" +
                   std::to_string(kv_index_[entry.key]) + ")");
        }
        kvs_.push_back(std::move(entry));
    }

    // general.alignment: the data section and every tensor offset are multiples of it.
    p.ctx.clear();
    if (const kv * a = find("general.alignment")) {
        p.ctx = "metadata key 'general.alignment'";
        uint64_t align = 0;
        if (is_unsigned(a->val.type)) align = a->val.u;
        else if (is_signed(a->val.type) && a->val.i > 0) align = uint64_t(a->val.i);
        else p.fail(error_code::gguf_invalid, std::string("has type ") + value_type_name(a->val.type) +
                    ", expected a positive integer (u32)");
        if (align == 0 || (align & (align - 1)) != 0) {
            p.fail(error_code::gguf_invalid, "alignment " + std::to_string(align) + " is not a power of two");
        }
        alignment_ = align;
    }

    // ---- tensor infos -------------------------------------------------------------------------
    p.ctx = "header";
    if (n_tensors > p.remaining() / k_min_tensor_info_bytes) {
        p.fail(error_code::gguf_invalid, "tensor count " + std::to_string(n_tensors) + " cannot fit in the " +
               std::to_string(p.remaining()) + " bytes left (each tensor info takes at least " +
               std::to_string(k_min_tensor_info_bytes) + ")");
    }
    tensors_.reserve(size_t(n_tensors));
    tensor_index_.reserve(size_t(n_tensors));
    for (uint64_t i = 0; i < n_tensors; ++i) {
        p.ctx = "tensor #" + std::to_string(i);
        tensor_info t;
        t.name = p.read_string("tensor name");
        const std::string bad = check_name(t.name);
        if (!bad.empty()) p.fail(error_code::gguf_invalid, "tensor name '" + printable(t.name) + "' " + bad);
        p.ctx = "tensor '" + std::string(t.name) + "'";

        t.n_dims = p.read<uint32_t>("n_dims");
        if (t.n_dims < 1 || t.n_dims > k_max_dims) {
            p.fail(error_code::gguf_invalid, "n_dims " + std::to_string(t.n_dims) + " is out of range (expected 1..4)");
        }
        int64_t n_elements = 1;
        for (uint32_t d = 0; d < t.n_dims; ++d) {
            const uint64_t dim = p.read<uint64_t>("dimension");
            if (dim == 0 || dim > uint64_t(INT64_MAX)) {
                p.fail(error_code::gguf_invalid, "dimension " + std::to_string(d) + " is " + std::to_string(dim) +
                       " (expected 1..2^63-1)");
            }
            t.ne[d] = int64_t(dim);
            if (__builtin_mul_overflow(n_elements, t.ne[d], &n_elements)) {
                p.fail(error_code::gguf_invalid, "element count of the dimensions overflows int64");
            }
        }

        const uint32_t type_id = p.read<uint32_t>("tensor type");
        const ggml_type_traits traits = ggml_type_info(type_id);
        if (!traits.name) p.fail(error_code::gguf_unsupported, "unknown tensor type id " + std::to_string(type_id));
        t.type = ggml_type(type_id);
        if (t.ne[0] % traits.block_size != 0) {
            p.fail(error_code::gguf_invalid, "ne[0] = " + std::to_string(t.ne[0]) + " is not a multiple of the block size " +
                   std::to_string(traits.block_size) + " of type " + traits.name);
        }
        const uint64_t n_blocks = uint64_t(n_elements) / traits.block_size;
        if (__builtin_mul_overflow(n_blocks, uint64_t(traits.type_size), &t.n_bytes)) {
            p.fail(error_code::gguf_invalid, "byte size of " + dims_string(t) + " " + traits.name + " overflows 64 bits");
        }

        t.offset = p.read<uint64_t>("tensor data offset");
        if (t.offset % alignment_ != 0) {
            p.fail(error_code::gguf_invalid, "data offset " + std::to_string(t.offset) + " is not a multiple of the alignment " +
                   std::to_string(alignment_));
        }
        if (!tensor_index_.emplace(t.name, tensors_.size()).second) {
            p.fail(error_code::gguf_invalid, "duplicate tensor name (also tensor #" +
                   std::to_string(tensor_index_[t.name]) + ")");
        }
        tensors_.push_back(t);
    }

    // ---- data section -------------------------------------------------------------------------
    p.ctx.clear();
    const uint64_t end_of_infos = p.pos();
    const uint64_t pad = (alignment_ - end_of_infos % alignment_) % alignment_;
    if (pad > std::numeric_limits<uint64_t>::max() - end_of_infos) {
        p.fail(error_code::gguf_invalid, "data section offset overflows with alignment " + std::to_string(alignment_));
    }
    data_offset_ = end_of_infos + pad;
    if (!tensors_.empty() && data_offset_ > size_) {
        p.fail(error_code::gguf_invalid, "data section starts at offset " + std::to_string(data_offset_) +
               ", past the end of the file (size " + std::to_string(size_) + ")");
    }
    const uint64_t data_size = tensors_.empty() ? 0 : size_ - data_offset_;
    for (auto & t : tensors_) {
        if (t.offset > data_size || t.n_bytes > data_size - t.offset) {
            p.ctx = "tensor '" + std::string(t.name) + "'";
            p.fail(error_code::gguf_invalid, "data [" + std::to_string(t.offset) + ", " +
                   (t.n_bytes > UINT64_MAX - t.offset ? std::string("overflow") : std::to_string(t.offset + t.n_bytes)) +
                   ") of " + dims_string(t) + " " + ggml_type_info(uint32_t(t.type)).name +
                   " lies outside the data section of " + std::to_string(data_size) + " bytes");
        }
        t.data = base_ + data_offset_ + t.offset;
    }

    // Tensors may come in any order in the data section but must not share bytes.
    std::vector<const tensor_info *> by_offset;
    by_offset.reserve(tensors_.size());
    for (const auto & t : tensors_) by_offset.push_back(&t);
    std::sort(by_offset.begin(), by_offset.end(),
              [](const tensor_info * a, const tensor_info * b) { return a->offset < b->offset; });
    for (size_t k = 1; k < by_offset.size(); ++k) {
        const tensor_info * prev = by_offset[k - 1];
        const tensor_info * cur = by_offset[k];
        if (prev->offset + prev->n_bytes > cur->offset) {
            p.ctx = "tensor '" + std::string(cur->name) + "'";
            p.fail(error_code::gguf_invalid, "data at offset " + std::to_string(cur->offset) + " overlaps tensor '" +
                   std::string(prev->name) + "' [" + std::to_string(prev->offset) + ", " +
                   std::to_string(prev->offset + prev->n_bytes) + ")");
        }
    }
}

// ---- lookups and typed getters -------------------------------------------------------------------

const kv * file::find(std::string_view key) const {
    const auto it = kv_index_.find(key);
    return it == kv_index_.end() ? nullptr : &kvs_[it->second];
}

const tensor_info * file::find_tensor(std::string_view name) const {
    const auto it = tensor_index_.find(name);
    return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

void file::fail_type(const kv & entry, const char * expected) const {
    std::string got = value_type_name(entry.val.type);
    if (entry.val.type == value_type::array) got += std::string(" of ") + value_type_name(entry.val.elem_type);
    throw error(error_code::gguf_invalid,
                path_ + ": metadata key '" + std::string(entry.key) + "' has type " + got + ", expected " + expected);
}

namespace {

// Integer value as (negative?, magnitude) so every fit check is exact; false if not an integer type.
bool integer_parts(const value & v, bool & negative, uint64_t & magnitude) {
    if (is_unsigned(v.type)) { negative = false; magnitude = v.u; return true; }
    if (is_signed(v.type)) {
        negative = v.i < 0;
        magnitude = negative ? uint64_t(0) - uint64_t(v.i) : uint64_t(v.i);
        return true;
    }
    return false;
}

bool integer_fits(const value & v, int64_t lo, uint64_t hi, int64_t & out_signed, uint64_t & out_unsigned) {
    bool negative;
    uint64_t magnitude;
    if (!integer_parts(v, negative, magnitude)) return false;
    if (negative) {
        if (lo >= 0 || magnitude > uint64_t(0) - uint64_t(lo)) return false;
        out_signed = int64_t(uint64_t(0) - magnitude);
        return true;
    }
    if (magnitude > hi) return false;
    out_unsigned = magnitude;
    out_signed = int64_t(magnitude);  // only meaningful when magnitude <= INT64_MAX
    return true;
}

} // namespace

std::optional<std::string_view> file::get_string(std::string_view key) const {
    const kv * e = find(key);
    if (!e) return std::nullopt;
    if (e->val.type != value_type::string) fail_type(*e, "string");
    return e->val.str;
}

std::optional<uint64_t> file::get_u64(std::string_view key) const {
    const kv * e = find(key);
    if (!e) return std::nullopt;
    int64_t s = 0;
    uint64_t u = 0;
    if (!integer_fits(e->val, 0, UINT64_MAX, s, u)) fail_type(*e, "an integer in 0..2^64-1");
    return u;
}

std::optional<uint32_t> file::get_u32(std::string_view key) const {
    const kv * e = find(key);
    if (!e) return std::nullopt;
    int64_t s = 0;
    uint64_t u = 0;
    if (!integer_fits(e->val, 0, UINT32_MAX, s, u)) fail_type(*e, "an integer in 0..4294967295");
    return uint32_t(u);
}

std::optional<int64_t> file::get_i64(std::string_view key) const {
    const kv * e = find(key);
    if (!e) return std::nullopt;
    int64_t s = 0;
    uint64_t u = 0;
    if (!integer_fits(e->val, INT64_MIN, uint64_t(INT64_MAX), s, u)) fail_type(*e, "an integer in the i64 range");
    return s;
}

std::optional<double> file::get_f64(std::string_view key) const {
    const kv * e = find(key);
    if (!e) return std::nullopt;
    if (e->val.type == value_type::f32 || e->val.type == value_type::f64) return e->val.f;
    if (is_unsigned(e->val.type)) return double(e->val.u);
    if (is_signed(e->val.type)) return double(e->val.i);
    fail_type(*e, "a number");
}

std::optional<float> file::get_f32(std::string_view key) const {
    const std::optional<double> v = get_f64(key);
    if (!v) return std::nullopt;
    return float(*v);
}

std::optional<bool> file::get_bool(std::string_view key) const {
    const kv * e = find(key);
    if (!e) return std::nullopt;
    if (e->val.type != value_type::boolean) fail_type(*e, "bool");
    return e->val.u != 0;
}

std::optional<std::vector<std::string_view>> file::get_string_array(std::string_view key) const {
    const kv * e = find(key);
    if (!e) return std::nullopt;
    if (e->val.type != value_type::array || e->val.elem_type != value_type::string) fail_type(*e, "array of string");
    std::vector<std::string_view> out;
    out.reserve(e->val.elems.size());
    for (const value & v : e->val.elems) out.push_back(v.str);
    return out;
}

std::optional<std::vector<float>> file::get_f32_array(std::string_view key) const {
    const kv * e = find(key);
    if (!e) return std::nullopt;
    if (e->val.type != value_type::array ||
        (e->val.elem_type != value_type::f32 && e->val.elem_type != value_type::f64)) {
        fail_type(*e, "array of f32");
    }
    std::vector<float> out;
    out.reserve(e->val.elems.size());
    for (const value & v : e->val.elems) out.push_back(float(v.f));
    return out;
}

std::optional<std::vector<int32_t>> file::get_i32_array(std::string_view key) const {
    const kv * e = find(key);
    if (!e) return std::nullopt;
    if (e->val.type != value_type::array || !(is_unsigned(e->val.elem_type) || is_signed(e->val.elem_type))) {
        fail_type(*e, "array of i32");
    }
    std::vector<int32_t> out;
    out.reserve(e->val.elems.size());
    for (size_t k = 0; k < e->val.elems.size(); ++k) {
        int64_t s = 0;
        uint64_t u = 0;
        if (!integer_fits(e->val.elems[k], INT32_MIN, uint64_t(INT32_MAX), s, u)) {
            throw error(error_code::gguf_invalid, path_ + ": metadata key '" + std::string(key) + "': element " +
                        std::to_string(k) + " does not fit i32");
        }
        out.push_back(int32_t(s));
    }
    return out;
}

} // namespace tmill::gguf
