// vocab::from_gguf on small GGUF files written by the test: the metadata it reads, and clear
// tmill::error(tokenizer) for missing or inconsistent tokenizer metadata.
#include "check.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "base/error.h"
#include "gguf/gguf.h"
#include "tokenizer/vocab.h"

namespace {

// A minimal GGUF v3 writer: metadata only, no tensors.
struct gguf_writer {
    std::string bytes;
    uint64_t n_kv = 0;

    void u32(uint32_t v) { bytes.append(reinterpret_cast<const char *>(&v), 4); }
    void u64(uint64_t v) { bytes.append(reinterpret_cast<const char *>(&v), 8); }
    void str(const std::string & s) { u64(s.size()); bytes.append(s); }
    void key(const std::string & k, uint32_t type) { str(k); u32(type); ++n_kv; }
    void kv_string(const std::string & k, const std::string & v) { key(k, 8); str(v); }
    void kv_u32(const std::string & k, uint32_t v) { key(k, 4); u32(v); }
    void kv_bool(const std::string & k, bool v) { key(k, 7); bytes.push_back(v ? 1 : 0); }
    void kv_strings(const std::string & k, const std::vector<std::string> & v) {
        key(k, 9); u32(8); u64(v.size());
        for (const auto & s : v) str(s);
    }
    void kv_i32s(const std::string & k, const std::vector<int32_t> & v) {
        key(k, 9); u32(5); u64(v.size());
        for (int32_t x : v) u32(uint32_t(x));
    }
    void kv_f32s(const std::string & k, const std::vector<float> & v) {
        key(k, 9); u32(6); u64(v.size());
        for (float x : v) bytes.append(reinterpret_cast<const char *>(&x), 4);
    }
    // Writes the file and returns its path.
    std::string write(const std::string & name) const {
        std::string head = "GGUF";
        const uint32_t version = 3;
        const uint64_t n_tensors = 0;
        head.append(reinterpret_cast<const char *>(&version), 4);
        head.append(reinterpret_cast<const char *>(&n_tensors), 8);
        head.append(reinterpret_cast<const char *>(&n_kv), 8);
        const char * tmp = std::getenv("TMPDIR");
        const std::string path = std::string(tmp && *tmp ? tmp : "/tmp") + "/tokenmill-tok-" + name + ".gguf";
        FILE * f = std::fopen(path.c_str(), "wb");
        if (f) {
            std::fwrite(head.data(), 1, head.size(), f);
            std::fwrite(bytes.data(), 1, bytes.size(), f);
            std::fclose(f);
        }
        return path;
    }
};

std::shared_ptr<const tmill::tok::vocab> load(const gguf_writer & w, const std::string & name) {
    const auto file = tmill::gguf::file::open(w.write(name));
    return tmill::tok::vocab::from_gguf(*file);
}

gguf_writer tiny_spm() {
    gguf_writer w;
    w.kv_string("tokenizer.ggml.model", "llama");
    w.kv_strings("tokenizer.ggml.tokens", {"<unk>", "<s>", "</s>", "\xE2\x96\x81", "a", "\xE2\x96\x81" "a"});
    w.kv_f32s("tokenizer.ggml.scores", {0, 0, 0, -1, -1, -0.5f});
    w.kv_i32s("tokenizer.ggml.token_type", {2, 3, 3, 1, 1, 1});
    return w;
}

} // namespace

TM_TEST("tokenizer: from_gguf reads a small SPM vocab") {
    gguf_writer w = tiny_spm();
    w.kv_u32("tokenizer.ggml.bos_token_id", 1);
    w.kv_u32("tokenizer.ggml.eos_token_id", 2);
    w.kv_u32("tokenizer.ggml.padding_token_id", 0xFFFFFFFFu);  // "none", as real files write it
    w.kv_bool("tokenizer.ggml.add_eos_token", true);
    const auto v = load(w, "spm");
    CHECK(v->type() == tmill::tok::vocab_type::spm);
    CHECK_EQ(v->n_tokens(), 6);
    CHECK_EQ(v->bos(), 1);
    CHECK_EQ(v->eos(), 2);
    CHECK_EQ(v->pad(), -1);
    CHECK_EQ(v->unk(), 0);
    CHECK(v->add_bos() && v->add_eos() && v->add_space_prefix());
    CHECK(v->tokenize("a", true, false) == std::vector<int32_t>({1, 5, 2}));
    CHECK(v->is_special(1) && !v->is_special(5));
}

TM_TEST("tokenizer: from_gguf errors for missing or inconsistent metadata") {
    {
        gguf_writer w;
        w.kv_strings("tokenizer.ggml.tokens", {"a"});
        CHECK_THROWS_CODE(load(w, "no-model"), tokenizer);
    }
    {
        gguf_writer w;
        w.kv_string("tokenizer.ggml.model", "llama");
        CHECK_THROWS_CODE(load(w, "no-tokens"), tokenizer);
    }
    {
        gguf_writer w;
        w.kv_string("tokenizer.ggml.model", "bert");
        w.kv_strings("tokenizer.ggml.tokens", {"a"});
        CHECK_THROWS_CODE(load(w, "bert"), tokenizer);
    }
    {
        gguf_writer w;
        w.kv_string("tokenizer.ggml.model", "gpt2");
        w.kv_string("tokenizer.ggml.pre", "gpt-2");
        w.kv_strings("tokenizer.ggml.tokens", {"a", "b"});
        CHECK_THROWS_CODE(load(w, "no-merges"), tokenizer);
    }
    {
        gguf_writer w;
        w.kv_string("tokenizer.ggml.model", "gpt2");
        w.kv_string("tokenizer.ggml.pre", "made-up");
        w.kv_strings("tokenizer.ggml.tokens", {"a", "b"});
        w.kv_strings("tokenizer.ggml.merges", {"a b"});
        CHECK_THROWS_CODE(load(w, "bad-pre"), tokenizer);
    }
    {
        gguf_writer bad;
        bad.kv_string("tokenizer.ggml.model", "llama");
        bad.kv_strings("tokenizer.ggml.tokens", {"a", "b"});
        bad.kv_f32s("tokenizer.ggml.scores", {0});
        CHECK_THROWS_CODE(load(bad, "scores"), tokenizer);
    }
}
