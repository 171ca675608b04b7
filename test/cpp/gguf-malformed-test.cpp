// Malformed GGUF files: each variant of a small valid file must fail with the right tmill::error code and
// a message "<path>: ..." naming the problem. Variants are built byte by byte into a temp directory.
#include "check.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>
#include <vector>

#include "base/error.h"
#include "gguf/gguf.h"

namespace {

// ---- a tiny byte-level GGUF builder (little-endian) ----------------------------------------------

struct bytes {
    std::string b;
    bytes & u8(uint8_t v) { b.push_back(char(v)); return *this; }
    bytes & u32(uint32_t v) { b.append(reinterpret_cast<const char *>(&v), 4); return *this; }
    bytes & u64(uint64_t v) { b.append(reinterpret_cast<const char *>(&v), 8); return *this; }
    bytes & str(std::string_view s) { u64(s.size()); b.append(s.data(), s.size()); return *this; }
    bytes & raw(std::string_view s) { b.append(s.data(), s.size()); return *this; }
};

enum : uint32_t { t_u8 = 0, t_u32 = 4, t_f32 = 6, t_bool = 7, t_string = 8, t_array = 9 };

std::string kv_u32(std::string_view key, uint32_t v) { return bytes().str(key).u32(t_u32).u32(v).b; }
std::string kv_str(std::string_view key, std::string_view v) { return bytes().str(key).u32(t_string).str(v).b; }

struct tensor_spec {
    std::string name;
    std::vector<uint64_t> dims;
    uint32_t type;
    uint64_t offset;
};

struct file_spec {
    std::string magic = "GGUF";
    uint32_t version = 3;
    std::vector<std::string> kvs;      // each one serialized key + type + value
    std::vector<tensor_spec> tensors;
    uint64_t alignment = 32;           // used to pad the tensor infos
    uint64_t data_bytes = 128;         // zero bytes in the data section
    int64_t n_kv = -1;                 // overrides the counts when >= 0
    int64_t n_tensors = -1;

    static file_spec valid() {
        file_spec s;
        s.kvs.push_back(kv_str("general.architecture", "llama"));
        s.kvs.push_back(kv_u32("general.alignment", 32));
        // a nested array: [[1, 2], [3]] of u8
        s.kvs.push_back(bytes().str("test.nested").u32(t_array).u32(t_array).u64(2)
                            .u32(t_u8).u64(2).u8(1).u8(2).u32(t_u8).u64(1).u8(3).b);
        s.tensors.push_back({"a", {8, 2}, 0, 0});    // f32, 64 bytes
        s.tensors.push_back({"b", {32, 1}, 8, 64});  // q8_0, 34 bytes
        return s;
    }

    std::string build() const {
        bytes o;
        o.raw(magic).u32(version);
        o.u64(n_tensors >= 0 ? uint64_t(n_tensors) : tensors.size());
        o.u64(n_kv >= 0 ? uint64_t(n_kv) : kvs.size());
        for (const auto & kv : kvs) o.raw(kv);
        for (const auto & t : tensors) {
            o.str(t.name).u32(uint32_t(t.dims.size()));
            for (uint64_t d : t.dims) o.u64(d);
            o.u32(t.type).u64(t.offset);
        }
        while (o.b.size() % alignment) o.u8(0);
        o.b.append(size_t(data_bytes), '\0');
        return o.b;
    }
};

std::string temp_dir() {
    static std::string dir;
    if (dir.empty()) {
        char tmpl[] = "/tmp/tm-gguf-malformed-XXXXXX";
        const char * d = mkdtemp(tmpl);
        dir = d ? d : "/tmp";
    }
    return dir;
}

std::string write_file(const std::string & name, const std::string & content) {
    const std::string path = temp_dir() + "/" + name + ".gguf";
    FILE * fp = std::fopen(path.c_str(), "wb");
    if (!fp) return path;
    std::fwrite(content.data(), 1, content.size(), fp);
    std::fclose(fp);
    return path;
}

// Opens `content` written as <name>.gguf; it must throw `code` with a message that starts with the path
// and contains `needle`.
void expect_error(const char * name, const std::string & content, tmill::error_code code, const std::string & needle) {
    const std::string path = write_file(name, content);
    try {
        tmill::gguf::file::open(path);
        tm_test::record_failure(__FILE__, __LINE__, std::string(name) + ": opened without error");
    } catch (const tmill::error & e) {
        const std::string msg = e.what();
        if (e.code() != code) {
            tm_test::record_failure(__FILE__, __LINE__, std::string(name) + ": code " + e.code_name() +
                                    " (expected " + tmill::error_code_name(code) + "): " + msg);
        }
        if (msg.rfind(path + ": ", 0) != 0 || msg.find(needle) == std::string::npos) {
            tm_test::record_failure(__FILE__, __LINE__, std::string(name) + ": message '" + msg +
                                    "' lacks the path or '" + needle + "'");
        }
    }
    std::remove(path.c_str());
}

std::string with_u64_at(std::string s, size_t at, uint64_t v) {
    std::memcpy(&s[at], &v, 8);
    return s;
}

constexpr uint64_t k_2_60 = uint64_t(1) << 60;
constexpr uint64_t k_2_63 = uint64_t(1) << 63;

} // namespace

TM_TEST("gguf malformed: the base file is valid") {
    const std::string path = write_file("valid", file_spec::valid().build());
    auto f = tmill::gguf::file::open(path);
    CHECK_EQ(f->tensors().size(), size_t(2));
    const auto * nested = f->find("test.nested");
    CHECK(nested != nullptr);
    if (nested) {
        CHECK_EQ(nested->val.elems.size(), size_t(2));
        if (nested->val.elems.size() == 2) {
            CHECK_EQ(nested->val.elems[0].elems.size(), size_t(2));
            CHECK_EQ(nested->val.elems[1].elems[0].u, uint64_t(3));
        }
    }
    const auto * b = f->find_tensor("b");
    CHECK(b != nullptr);
    if (b) CHECK_EQ(b->n_bytes, uint64_t(34));
    std::remove(path.c_str());
}

TM_TEST("gguf malformed: header") {
    using tmill::error_code;
    expect_error("empty", "", error_code::gguf_invalid, "file is empty");
    expect_error("short", "GGU", error_code::gguf_invalid, "too short for the GGUF magic");
    file_spec s = file_spec::valid();
    s.magic = "GGML";
    expect_error("bad-magic", s.build(), error_code::gguf_invalid, "bad magic 0x47474d4c");
    s = file_spec::valid();
    s.magic = "FUGG";
    expect_error("big-endian-magic", s.build(), error_code::gguf_unsupported, "big-endian GGUF files are not supported");
    s = file_spec::valid();
    s.version = 0x03000000;
    expect_error("big-endian-version", s.build(), error_code::gguf_unsupported, "big-endian GGUF files are not supported");
    s.version = 1;
    expect_error("v1", s.build(), error_code::gguf_unsupported, "unsupported GGUF version 1");
    s.version = 4;
    expect_error("v4", s.build(), error_code::gguf_unsupported, "unsupported GGUF version 4");
    s.version = 2;
    {
        const std::string path = write_file("v2", s.build());
        auto f = tmill::gguf::file::open(path);  // version 2 has the same layout
        CHECK_EQ(f->version(), 2u);
        std::remove(path.c_str());
    }
    expect_error("truncated-header", file_spec::valid().build().substr(0, 12), error_code::gguf_invalid,
                 "truncated: tensor count needs 8 bytes at offset 8");
    s = file_spec::valid();
    s.n_kv = int64_t(k_2_60);
    expect_error("n-kv-huge", s.build(), error_code::gguf_invalid, "metadata count 1152921504606846976 cannot fit");
    s = file_spec::valid();
    s.n_tensors = int64_t(uint64_t(1) << 40);
    expect_error("n-tensors-huge", s.build(), error_code::gguf_invalid, "tensor count 1099511627776 cannot fit");
    s = file_spec::valid();
    s.n_tensors = 3;  // one more tensor info than present
    expect_error("n-tensors-too-many", s.build(), error_code::gguf_invalid, "tensor #2");
}

TM_TEST("gguf malformed: metadata") {
    using tmill::error_code;
    auto with_kv = [](std::string kv) {
        file_spec s = file_spec::valid();
        s.kvs.push_back(std::move(kv));
        return s.build();
    };
    expect_error("key-len-huge", with_kv(bytes().u64(k_2_63).b), error_code::gguf_invalid,
                 "metadata entry #3: key length 9223372036854775808 exceeds");
    expect_error("string-len-huge", with_kv(bytes().str("x.s").u32(t_string).u64(k_2_63).b), error_code::gguf_invalid,
                 "metadata key 'x.s': string value length 9223372036854775808 exceeds");
    expect_error("array-count-huge", with_kv(bytes().str("x.a").u32(t_array).u32(t_u32).u64(k_2_60).b),
                 error_code::gguf_invalid, "metadata key 'x.a': array count 1152921504606846976 of u32");
    expect_error("string-array-count-huge", with_kv(bytes().str("x.a").u32(t_array).u32(t_string).u64(k_2_60).b),
                 error_code::gguf_invalid, "array count 1152921504606846976 of string");
    expect_error("value-type-unknown", with_kv(bytes().str("x.t").u32(13).u32(0).b), error_code::gguf_invalid,
                 "metadata key 'x.t': unknown value type 13");
    expect_error("elem-type-unknown", with_kv(bytes().str("x.e").u32(t_array).u32(99).u64(1).u32(0).b),
                 error_code::gguf_invalid, "metadata key 'x.e': unknown array element type 99");
    expect_error("duplicate-key", with_kv(kv_str("general.architecture", "qwen2")), error_code::gguf_invalid,
                 "metadata key 'general.architecture': duplicate key");
    expect_error("empty-key", with_kv(kv_u32("", 1)), error_code::gguf_invalid, "key '' is empty");
    expect_error("key-bad-utf8", with_kv(kv_u32("bad\xC3(", 1)), error_code::gguf_invalid,
                 "key 'bad\\xc3(' is not valid UTF-8");
    expect_error("key-nul", with_kv(kv_u32(std::string_view("a\0b", 3), 1)), error_code::gguf_invalid,
                 "contains a NUL byte");
    expect_error("bool-2", with_kv(bytes().str("x.b").u32(t_bool).u8(2).b), error_code::gguf_invalid,
                 "metadata key 'x.b': bool value 2 is not 0 or 1");
    bytes deep;
    deep.str("x.deep").u32(t_array);
    for (int k = 0; k < 12; ++k) deep.u32(t_array).u64(1);
    deep.u32(t_u8).u64(0);
    expect_error("arrays-too-deep", with_kv(deep.b), error_code::gguf_invalid, "arrays nested deeper than 8 levels");

    // Truncated inside a metadata value: cut the file in the middle of "llama".
    const std::string full = file_spec::valid().build();
    const size_t at = full.find("llama");
    expect_error("truncated-value", full.substr(0, at + 2), error_code::gguf_invalid,
                 "metadata key 'general.architecture': string value length 5 exceeds");

    file_spec s = file_spec::valid();
    s.kvs[1] = kv_u32("general.alignment", 48);
    expect_error("alignment-48", s.build(), error_code::gguf_invalid, "alignment 48 is not a power of two");
    s.kvs[1] = kv_u32("general.alignment", 0);
    expect_error("alignment-0", s.build(), error_code::gguf_invalid, "alignment 0 is not a power of two");
    s.kvs[1] = kv_str("general.alignment", "32");
    expect_error("alignment-string", s.build(), error_code::gguf_invalid,
                 "metadata key 'general.alignment': has type string, expected a positive integer");
}

TM_TEST("gguf malformed: tensor infos") {
    using tmill::error_code;
    auto with_tensor = [](tensor_spec t, size_t index = 0) {
        file_spec s = file_spec::valid();
        s.tensors[index] = std::move(t);
        return s.build();
    };
    expect_error("n-dims-5", with_tensor({"a", {8, 2, 1, 1, 1}, 0, 0}), error_code::gguf_invalid,
                 "tensor 'a': n_dims 5 is out of range (expected 1..4)");
    expect_error("n-dims-0", with_tensor({"a", {}, 0, 0}), error_code::gguf_invalid, "tensor 'a': n_dims 0 is out of range");
    expect_error("dim-0", with_tensor({"a", {8, 0}, 0, 0}), error_code::gguf_invalid, "tensor 'a': dimension 1 is 0");
    expect_error("dim-2-63", with_tensor({"a", {k_2_63, 1}, 0, 0}), error_code::gguf_invalid,
                 "tensor 'a': dimension 0 is 9223372036854775808");
    expect_error("dims-overflow", with_tensor({"a", {uint64_t(1) << 32, uint64_t(1) << 32}, 0, 0}),
                 error_code::gguf_invalid, "tensor 'a': element count of the dimensions overflows int64");
    expect_error("bytes-overflow", with_tensor({"a", {uint64_t(1) << 62}, 0, 0}), error_code::gguf_invalid,
                 "tensor 'a': byte size of [4611686018427387904] f32 overflows 64 bits");
    expect_error("type-unknown", with_tensor({"a", {8, 2}, 4, 0}), error_code::gguf_unsupported,
                 "tensor 'a': unknown tensor type id 4");
    expect_error("type-unknown-big", with_tensor({"a", {8, 2}, 0xFFFFFFFFu, 0}), error_code::gguf_unsupported,
                 "unknown tensor type id 4294967295");
    expect_error("block-size", with_tensor({"b", {16, 1}, 8, 64}, 1), error_code::gguf_invalid,
                 "tensor 'b': ne[0] = 16 is not a multiple of the block size 32 of type q8_0");
    expect_error("offset-unaligned", with_tensor({"b", {32, 1}, 8, 65}, 1), error_code::gguf_invalid,
                 "tensor 'b': data offset 65 is not a multiple of the alignment 32");
    expect_error("offset-past-end", with_tensor({"b", {32, 1}, 8, uint64_t(1) << 40}, 1), error_code::gguf_invalid,
                 "tensor 'b': data [1099511627776, 1099511627810) of [32, 1] q8_0 lies outside the data section of 128 bytes");
    expect_error("offset-huge", with_tensor({"b", {32, 1}, 8, UINT64_MAX - 31}, 1), error_code::gguf_invalid,
                 "lies outside the data section");
    expect_error("duplicate-tensor", with_tensor({"a", {32, 1}, 8, 64}, 1), error_code::gguf_invalid,
                 "tensor 'a': duplicate tensor name (also tensor #0)");
    expect_error("overlap", with_tensor({"b", {32, 1}, 8, 32}, 1), error_code::gguf_invalid,
                 "tensor 'b': data at offset 32 overlaps tensor 'a' [0, 64)");
    expect_error("name-empty", with_tensor({"", {8, 2}, 0, 0}), error_code::gguf_invalid, "tensor #0: tensor name '' is empty");
    expect_error("name-bad-utf8", with_tensor({"w\xFF", {8, 2}, 0, 0}), error_code::gguf_invalid,
                 "tensor name 'w\\xff' is not valid UTF-8");
    {
        file_spec s = file_spec::valid();
        std::string b = s.build();
        // The first tensor name's length field sits right after the metadata.
        const size_t at = b.find(std::string("\x01\0\0\0\0\0\0\0a", 9));
        expect_error("name-len-huge", with_u64_at(b, at, k_2_63), error_code::gguf_invalid,
                     "tensor #0: tensor name length 9223372036854775808 exceeds");
    }

    file_spec s = file_spec::valid();
    s.data_bytes = 80;  // tensor b needs [64, 98)
    expect_error("data-short", s.build(), error_code::gguf_invalid,
                 "tensor 'b': data [64, 98) of [32, 1] q8_0 lies outside the data section of 80 bytes");
    s.data_bytes = 0;
    s.alignment = 1;    // the file ends right after the tensor infos, before the aligned data start
    const std::string no_data = s.build();
    if (no_data.size() % 32 != 0) {
        expect_error("data-missing", no_data, error_code::gguf_invalid, "past the end of the file");
    } else {
        expect_error("data-missing", no_data, error_code::gguf_invalid, "lies outside the data section of 0 bytes");
    }
    const std::string full = file_spec::valid().build();
    const size_t at = full.find(std::string("\x01\0\0\0\0\0\0\0b", 9));
    // Cut inside tensor b's second dimension, leaving enough bytes to pass the tensor count bound.
    expect_error("truncated-infos", full.substr(0, at + 23), error_code::gguf_invalid,
                 "tensor 'b': truncated: dimension needs 8 bytes");
}

TM_TEST("gguf malformed: patched stories260K") {
    const char * env = std::getenv("TOKENMILL_SHARED");
    const std::string path = std::string(env && *env ? env : "../shared") + "/models/stories260K.gguf";
    FILE * fp = std::fopen(path.c_str(), "rb");
    CHECK(fp != nullptr);
    if (!fp) return;
    std::string content;
    char buf[65536];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, fp)) > 0) content.append(buf, n);
    std::fclose(fp);
    CHECK_EQ(content.size(), size_t(1185376));

    using tmill::error_code;
    expect_error("stories-half", content.substr(0, content.size() / 2), error_code::gguf_invalid,
                 "lies outside the data section");
    expect_error("stories-one-short", content.substr(0, content.size() - 1), error_code::gguf_invalid,
                 "lies outside the data section");
    expect_error("stories-n-kv", with_u64_at(content, 16, k_2_60), error_code::gguf_invalid, "metadata count");
    expect_error("stories-n-tensors", with_u64_at(content, 8, 1 << 20), error_code::gguf_invalid, "tensor count 1048576");
    // The first key's length field is at offset 24.
    expect_error("stories-key-len", with_u64_at(content, 24, UINT64_MAX), error_code::gguf_invalid,
                 "key length 18446744073709551615 exceeds");
    // Every prefix that cuts into the header, the metadata or the tensor infos is rejected.
    for (size_t cut : {size_t(0), size_t(5), size_t(23), size_t(100), size_t(7000), size_t(14000)}) {
        const std::string p = write_file("stories-cut", content.substr(0, cut));
        CHECK_THROWS_CODE(tmill::gguf::file::open(p), gguf_invalid);
        std::remove(p.c_str());
    }
    rmdir(temp_dir().c_str());
}
