// Shared helpers for the tokenizer tests: load a vocab from ../shared/models/vocab (cached per name).
#pragma once

#include <cstdlib>
#include <map>
#include <memory>
#include <string>

#include "gguf/gguf.h"
#include "tokenizer/vocab.h"

namespace tok_test {

inline std::shared_ptr<const tmill::tok::vocab> load_vocab(const std::string & name) {
    static std::map<std::string, std::shared_ptr<const tmill::tok::vocab>> cache;
    auto it = cache.find(name);
    if (it != cache.end()) return it->second;
    const char * env = std::getenv("TOKENMILL_SHARED");
    const std::string path = std::string(env && *env ? env : "../shared") + "/models/vocab/ggml-vocab-" + name + ".gguf";
    const auto file = tmill::gguf::file::open(path);
    auto v = tmill::tok::vocab::from_gguf(*file);
    cache[name] = v;
    return v;
}

inline bool valid_utf8(const std::string & s) {
    size_t i = 0;
    while (i < s.size()) {
        const auto b = static_cast<unsigned char>(s[i]);
        size_t n = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 0;
        if (n == 0 || i + n > s.size()) return false;
        for (size_t k = 1; k < n; ++k) if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
        i += n;
    }
    return true;
}

} // namespace tok_test
