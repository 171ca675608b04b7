// Fuzzing the reader with a fixed seed: random byte flips, truncations and huge u64 fields in
// stories260K.gguf. Every open must either succeed or throw tmill::error with a GGUF/io code.
#include "check.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <unistd.h>

#include "base/error.h"
#include "gguf/gguf.h"

TM_TEST("gguf fuzz: 2000 mutations of stories260K") {
    const char * env = std::getenv("TOKENMILL_SHARED");
    const std::string src = std::string(env && *env ? env : "../shared") + "/models/stories260K.gguf";
    FILE * fp = std::fopen(src.c_str(), "rb");
    CHECK(fp != nullptr);
    if (!fp) return;
    std::string original;
    char buf[65536];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, fp)) > 0) original.append(buf, n);
    std::fclose(fp);

    char tmpl[] = "/tmp/tm-gguf-fuzz-XXXXXX";
    const int fd = mkstemp(tmpl);
    CHECK(fd >= 0);
    if (fd < 0) return;
    close(fd);
    const std::string path = tmpl;

    // The header, metadata and tensor infos end at 14176; most mutations land there.
    const size_t meta_end = 14176;
    std::mt19937_64 rng(0x6767756675ull);
    int n_ok = 0, n_rejected = 0;
    for (int iter = 0; iter < 2000; ++iter) {
        std::string m = original;
        const int kind = int(rng() % 4);
        if (kind == 0) {  // flip a few random bytes
            const int flips = 1 + int(rng() % 8);
            for (int k = 0; k < flips; ++k) m[rng() % meta_end] = char(rng());
        } else if (kind == 1) {  // truncate
            m.resize(rng() % m.size());
        } else if (kind == 2) {  // a huge or boundary u64 at a random offset
            static const uint64_t huge[] = {UINT64_MAX, uint64_t(1) << 63, uint64_t(1) << 60, uint64_t(1) << 40,
                                            uint64_t(1) << 32, 0xFFFFFFFFull, 0};
            const uint64_t v = huge[rng() % (sizeof huge / sizeof huge[0])];
            std::memcpy(&m[rng() % (meta_end - 8)], &v, 8);
        } else {  // a small increment of a random u32 (lengths, counts, types by one)
            const size_t at = rng() % (meta_end - 4);
            uint32_t v;
            std::memcpy(&v, &m[at], 4);
            v += uint32_t(rng() % 3) + 1;
            std::memcpy(&m[at], &v, 4);
        }
        FILE * out = std::fopen(path.c_str(), "wb");
        if (!out) break;
        std::fwrite(m.data(), 1, m.size(), out);
        std::fclose(out);
        try {
            auto f = tmill::gguf::file::open(path);
            for (const auto & t : f->tensors()) CHECK(t.data + t.n_bytes <= f->bytes() + f->size());
            ++n_ok;
        } catch (const tmill::error & e) {
            const bool expected_code = e.code() == tmill::error_code::gguf_invalid ||
                                       e.code() == tmill::error_code::gguf_unsupported || e.code() == tmill::error_code::io;
            if (!expected_code) tm_test::record_failure(__FILE__, __LINE__, std::string("code ") + e.code_name());
            if (std::string(e.what()).rfind(path + ": ", 0) != 0) {
                tm_test::record_failure(__FILE__, __LINE__, std::string("message without path: ") + e.what());
            }
            ++n_rejected;
        }
    }
    std::remove(path.c_str());
    CHECK_EQ(n_ok + n_rejected, 2000);
    CHECK(n_rejected > 500);  // truncations alone are ~a quarter and always fail
}
