// Shared helpers for the libFuzzer targets (see docs/fuzzing.md): where the shared test material lives,
// and loading a vocabulary once per process.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <dirent.h>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "gguf/gguf.h"
#include "tokenizer/vocab.h"

namespace fuzz_util {

inline std::string shared_dir() {
    const char * env = std::getenv("TOKENMILL_SHARED");
    return std::string(env && *env ? env : "../shared");
}

// Loads a GGUF vocabulary; a missing file throws, so a target never fuzzes with nothing loaded.
inline std::shared_ptr<const tmill::tok::vocab> load_vocab(const std::string & relative_path) {
    const auto file = tmill::gguf::file::open(shared_dir() + "/" + relative_path);
    return tmill::tok::vocab::from_gguf(*file);
}

// The texts of test/fuzz/grammars/*.gbnf (or $TOKENMILL_FUZZ_GRAMMARS/*.gbnf), sorted by file name.
// Throws when the folder is missing or holds no grammar.
inline std::vector<std::string> read_grammars() {
    const char * env = std::getenv("TOKENMILL_FUZZ_GRAMMARS");
    const std::string dir = env && *env ? env : "test/fuzz/grammars";
    DIR * d = opendir(dir.c_str());
    if (!d) throw std::runtime_error("cannot open the grammar folder " + dir);
    std::vector<std::string> names;
    while (const dirent * e = readdir(d)) {
        const std::string name = e->d_name;
        if (name.size() > 5 && name.compare(name.size() - 5, 5, ".gbnf") == 0) names.push_back(name);
    }
    closedir(d);
    if (names.empty()) throw std::runtime_error("no .gbnf grammar in " + dir);
    std::sort(names.begin(), names.end());
    std::vector<std::string> texts;
    for (const auto & name : names) {
        std::ifstream in(dir + "/" + name, std::ios::binary);
        std::stringstream ss;
        ss << in.rdbuf();
        texts.push_back(ss.str());
    }
    return texts;
}

} // namespace fuzz_util
