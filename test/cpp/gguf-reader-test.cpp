// GGUF reader on the real files in ../shared/models: v3 F32 and F16 models, vocab-only files, v1.
#include "check.h"

#include <cstdlib>
#include <dirent.h>
#include <string>
#include <vector>

#include "base/error.h"
#include "gguf/gguf.h"

namespace {

std::string models_dir() {
    const char * env = std::getenv("TOKENMILL_SHARED");
    return std::string(env && *env ? env : "../shared") + "/models";
}

} // namespace

TM_TEST("gguf: stories260K metadata and tensors") {
    auto f = tmill::gguf::file::open(models_dir() + "/stories260K.gguf");
    CHECK_EQ(f->version(), 3u);
    CHECK_EQ(f->alignment(), 32u);
    CHECK_EQ(f->size(), size_t(1185376));
    CHECK_EQ(f->metadata().size(), size_t(19));
    CHECK_EQ(f->tensors().size(), size_t(48));

    CHECK(f->get_string("general.architecture") == std::string_view("llama"));
    CHECK(f->get_string("tokenizer.ggml.model") == std::string_view("llama"));
    CHECK_EQ(f->get_u32("llama.block_count").value_or(0), 5u);
    CHECK_EQ(f->get_u32("llama.embedding_length").value_or(0), 64u);
    CHECK_EQ(f->get_u32("llama.feed_forward_length").value_or(0), 172u);
    CHECK_EQ(f->get_u32("llama.attention.head_count").value_or(0), 8u);
    CHECK_EQ(f->get_u32("llama.attention.head_count_kv").value_or(0), 4u);
    CHECK_EQ(f->get_u64("llama.context_length").value_or(0), uint64_t(2048));
    CHECK_EQ(f->get_u32("tokenizer.ggml.padding_token_id").value_or(0), 4294967295u);
    CHECK_NEAR(f->get_f32("llama.attention.layer_norm_rms_epsilon").value_or(0), 1e-5, 1e-9);
    CHECK(!f->get_u32("llama.no_such_key").has_value());

    const auto tokens = f->get_string_array("tokenizer.ggml.tokens");
    CHECK(tokens.has_value());
    if (tokens) {
        CHECK_EQ(tokens->size(), size_t(512));
        CHECK(tokens->at(3) == std::string_view("<0x00>"));
    }
    CHECK_EQ(f->get_f32_array("tokenizer.ggml.scores").value_or(std::vector<float>()).size(), size_t(512));
    CHECK_EQ(f->get_i32_array("tokenizer.ggml.token_type").value_or(std::vector<int32_t>()).size(), size_t(512));

    // Wrong-type access names the key and the expected type.
    CHECK_THROWS_CODE(f->get_string("llama.block_count"), gguf_invalid);
    CHECK_THROWS_CODE(f->get_u32("general.architecture"), gguf_invalid);
    CHECK_THROWS_CODE(f->get_i32_array("tokenizer.ggml.tokens"), gguf_invalid);
    try {
        f->get_bool("llama.block_count");
        CHECK(false);
    } catch (const tmill::error & e) {
        const std::string msg = e.what();
        CHECK(msg.find("stories260K.gguf: metadata key 'llama.block_count' has type u32, expected bool") != std::string::npos);
    }

    const auto * emb = f->find_tensor("token_embd.weight");
    CHECK(emb != nullptr);
    if (emb) {
        CHECK_EQ(emb->n_dims, 2u);
        CHECK_EQ(emb->ne[0], int64_t(64));
        CHECK_EQ(emb->ne[1], int64_t(512));
        CHECK(emb->type == tmill::ggml_type::f32);
        CHECK_EQ(emb->n_bytes, uint64_t(64 * 512 * 4));
        CHECK(emb->data == f->bytes() + f->data_offset() + emb->offset);
    }
    const auto * down = f->find_tensor("blk.4.ffn_down.weight");
    CHECK(down != nullptr);
    if (down) {
        CHECK_EQ(down->ne[0], int64_t(172));
        CHECK_EQ(down->ne[1], int64_t(64));
    }
    const auto * norm = f->find_tensor("output_norm.weight");
    CHECK(norm != nullptr);
    if (norm) CHECK_EQ(norm->n_dims, 1u);
    CHECK(f->find_tensor("blk.5.attn_q.weight") == nullptr);
    CHECK_EQ(f->data_offset() % 32, uint64_t(0));
    for (const auto & t : f->tensors()) {
        CHECK(t.type == tmill::ggml_type::f32);
        CHECK(t.data + t.n_bytes <= f->bytes() + f->size());
    }
}

TM_TEST("gguf: llama-2-tiny-random F16") {
    auto f = tmill::gguf::file::open(models_dir() + "/llama-2-tiny-random.gguf");
    CHECK_EQ(f->version(), 3u);
    CHECK_EQ(f->tensors().size(), size_t(12));
    CHECK_EQ(f->get_u32("general.file_type").value_or(99), 1u);
    CHECK_EQ(f->get_string_array("tokenizer.ggml.tokens").value_or(std::vector<std::string_view>()).size(), size_t(32000));
    const auto * q = f->find_tensor("blk.0.attn_q.weight");
    CHECK(q != nullptr);
    if (q) {
        CHECK(q->type == tmill::ggml_type::f16);
        CHECK_EQ(q->ne[0], int64_t(8));
        CHECK_EQ(q->ne[1], int64_t(8));
        CHECK_EQ(q->n_bytes, uint64_t(128));
    }
    const auto * out = f->find_tensor("output.weight");
    CHECK(out != nullptr);
    if (out) CHECK_EQ(out->n_bytes, uint64_t(8 * 32000 * 2));
    const auto * norm = f->find_tensor("output_norm.weight");
    CHECK(norm != nullptr);
    if (norm) CHECK(norm->type == tmill::ggml_type::f32);
}

TM_TEST("gguf: every vocab file parses with no tensors") {
    const std::string dir = models_dir() + "/vocab";
    DIR * d = opendir(dir.c_str());
    CHECK(d != nullptr);
    if (!d) return;
    std::vector<std::string> names;
    while (dirent * ent = readdir(d)) {
        const std::string n = ent->d_name;
        if (n.size() > 5 && n.compare(n.size() - 5, 5, ".gguf") == 0) names.push_back(n);
    }
    closedir(d);
    CHECK(names.size() >= 11);
    for (const auto & n : names) {
        try {
            auto f = tmill::gguf::file::open(dir + "/" + n);
            CHECK(f->tensors().empty());
            CHECK(f->get_string("tokenizer.ggml.model").has_value());
            const auto tokens = f->get_string_array("tokenizer.ggml.tokens");
            CHECK(tokens.has_value() && tokens->size() > 1000);
        } catch (const tmill::error & e) {
            tm_test::record_failure(__FILE__, __LINE__, n + ": " + e.what());
        }
    }
}

TM_TEST("gguf: legacy v1 file is unsupported") {
    const std::string path = models_dir() + "/legacy/tinyllamas-stories-260k-f32.v1.gguf";
    CHECK_THROWS_CODE(tmill::gguf::file::open(path), gguf_unsupported);
    try {
        tmill::gguf::file::open(path);
    } catch (const tmill::error & e) {
        const std::string msg = e.what();
        CHECK(msg.rfind(path + ": ", 0) == 0);
        CHECK(msg.find("unsupported GGUF version 1") != std::string::npos);
    }
}

TM_TEST("gguf: missing file is an io error naming the path") {
    CHECK_THROWS_CODE(tmill::gguf::file::open("/nonexistent/dir/model.gguf"), io);
    CHECK_THROWS_CODE(tmill::gguf::file::open(models_dir()), io);  // a directory
}

TM_TEST("gguf: type traits") {
    CHECK_EQ(tmill::ggml_type_info(0).type_size, 4u);
    CHECK_EQ(tmill::ggml_type_info(12).block_size, 256u);
    CHECK_EQ(tmill::ggml_type_info(12).type_size, 144u);
    CHECK_EQ(tmill::ggml_type_info(13).type_size, 176u);
    CHECK_EQ(tmill::ggml_type_info(14).type_size, 210u);
    CHECK_EQ(tmill::ggml_type_info(8).type_size, 34u);
    CHECK_EQ(tmill::ggml_type_info(2).type_size, 18u);
    CHECK_EQ(tmill::ggml_type_info(30).type_size, 2u);
    CHECK(tmill::ggml_type_info(4).name == nullptr);
    CHECK(tmill::ggml_type_info(33).name == nullptr);
    CHECK(tmill::ggml_type_info(40).name == nullptr);
    CHECK(tmill::ggml_type_supported(tmill::ggml_type::q4_k));
    CHECK(tmill::ggml_type_supported(tmill::ggml_type::bf16));
    CHECK(tmill::ggml_type_supported(tmill::ggml_type::q2_k));
    CHECK(tmill::ggml_type_supported(tmill::ggml_type::iq4_xs));
    CHECK(!tmill::ggml_type_supported(tmill::ggml_type::iq3_s));
    CHECK(!tmill::ggml_type_supported(tmill::ggml_type::q8_1));   // an activation format only
    CHECK(tmill::ggml_type_describe(11) == "q3_K");
    CHECK(tmill::ggml_type_describe(77) == "unknown type id 77");
    CHECK(tmill::ggml_supported_type_names() ==
          "f32, f16, q4_0, q4_1, q5_0, q5_1, q8_0, q2_K, q3_K, q4_K, q5_K, q6_K, iq4_nl, iq4_xs, bf16");
}
