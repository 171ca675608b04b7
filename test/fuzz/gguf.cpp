// Fuzz target: the GGUF reader on arbitrary bytes. The reader only opens paths (it maps the file), so each
// input is written to one per-process file under $TMPDIR and opened (scripts/fuzz.cjs points TMPDIR at a
// folder it removes afterwards: libFuzzer ends without running atexit handlers); every metadata value
// and tensor is then walked through the typed getters. tmill::error is the expected outcome for malformed input; anything
// else (a sanitizer report, another exception, an abort) is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

#include "base/error.h"
#include "gguf/gguf.h"

namespace {

const std::string & temp_path() {
    static const std::string path = [] {
        const char * tmp = std::getenv("TMPDIR");
        return std::string(tmp && *tmp ? tmp : "/tmp") + "/tokenmill-fuzz-gguf-" + std::to_string(getpid()) + ".gguf";
    }();
    return path;
}

void walk(const tmill::gguf::file & f) {
    for (const auto & entry : f.metadata()) {
        const std::string_view key = entry.key;
        // Each getter either converts or throws tmill::error naming the key.
        try { (void)f.get_string(key); } catch (const tmill::error &) {}
        try { (void)f.get_u64(key); } catch (const tmill::error &) {}
        try { (void)f.get_u32(key); } catch (const tmill::error &) {}
        try { (void)f.get_i64(key); } catch (const tmill::error &) {}
        try { (void)f.get_f64(key); } catch (const tmill::error &) {}
        try { (void)f.get_f32(key); } catch (const tmill::error &) {}
        try { (void)f.get_bool(key); } catch (const tmill::error &) {}
        try { (void)f.get_string_array(key); } catch (const tmill::error &) {}
        try { (void)f.get_f32_array(key); } catch (const tmill::error &) {}
        try { (void)f.get_i32_array(key); } catch (const tmill::error &) {}
        (void)f.find(key);
    }
    // Touch the first and last byte of every tensor: the reader promised they lie inside the mapping.
    volatile uint8_t sink = 0;
    for (const auto & t : f.tensors()) {
        if (t.n_bytes > 0) sink = uint8_t(sink ^ t.data[0] ^ t.data[t.n_bytes - 1]);
        (void)f.find_tensor(t.name);
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t * data, size_t size) {
    FILE * out = std::fopen(temp_path().c_str(), "wb");
    if (!out) std::abort();  // the harness itself is broken; not a finding about the reader
    if (size > 0 && std::fwrite(data, 1, size, out) != size) std::abort();
    std::fclose(out);
    try {
        const auto f = tmill::gguf::file::open(temp_path());
        walk(*f);
    } catch (const tmill::error &) {
    }
    return 0;
}
