// Tokenizer test vectors: every string of ../shared/models/vocab/*.gguf.inp must tokenize (no BOS, no
// special parsing — as llama.cpp's test-tokenizer-0 calls it) to exactly the ids of the .out line; and
// detokenizing gives the text back (modulo SPM's leading space), whole and incrementally alike.
#include "check.h"

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "base/error.h"
#include "gguf/gguf.h"
#include "tokenizer/detokenizer.h"
#include "tokenizer/vocab.h"

namespace {

std::string vocab_dir() {
    const char * env = std::getenv("TOKENMILL_SHARED");
    return std::string(env && *env ? env : "../shared") + "/models/vocab/";
}

std::string read_all(const std::string & path) {
    std::ifstream f(path, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

struct vector_case {
    std::string text;
    std::vector<int32_t> ids;
};

std::vector<vector_case> load_cases(const std::string & name) {
    const std::string inp = read_all(vocab_dir() + name + ".inp");
    const std::string out = read_all(vocab_dir() + name + ".out");
    const std::string sep = "\n__ggml_vocab_test__\n";
    std::vector<vector_case> cases;
    for (size_t pos = 0; pos < inp.size();) {
        const size_t next = inp.find(sep, pos);
        if (next == std::string::npos) { cases.push_back({inp.substr(pos), {}}); break; }
        cases.push_back({inp.substr(pos, next - pos), {}});
        pos = next + sep.size();
    }
    std::istringstream lines(out);
    std::string line;
    size_t i = 0;
    while (std::getline(lines, line) && i < cases.size()) {
        std::istringstream ls(line);
        int32_t id;
        while (ls >> id) cases[i].ids.push_back(id);
        ++i;
    }
    CHECK_EQ(i, cases.size());
    return cases;
}

std::string join(const std::vector<int32_t> & ids) {
    std::string s;
    for (int32_t id : ids) s += std::to_string(id) + " ";
    return s;
}

void check_vocab(const std::string & name) {
    const auto file = tmill::gguf::file::open(vocab_dir() + name);
    const auto t0 = std::chrono::steady_clock::now();
    const auto v = tmill::tok::vocab::from_gguf(*file);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    CHECK(ms < 5000.0);  // ~40-80 ms optimised; the bound only catches pathologies (sanitizers, busy machine)
    const auto cases = load_cases(name);
    CHECK(cases.size() >= 40);
    int mismatches = 0;
    for (const auto & c : cases) {
        const auto ids = v->tokenize(c.text, false, false);
        if (ids != c.ids) {
            ++mismatches;
            tm_test::record_failure(__FILE__, __LINE__, name + ": '" + c.text + "'\n      got  " + join(ids) +
                                    "\n      want " + join(c.ids));
            continue;
        }
        // Round trip: the text comes back (SPM drops the space it added in front).
        const tmill::tok::detok_options opt{true, true};
        const std::string back = v->detokenize(ids.data(), ids.size(), opt);
        CHECK_EQ(back, c.text);
        // Incremental == whole.
        tmill::tok::incremental_detokenizer d(*v, opt);
        std::string inc;
        for (int32_t id : ids) inc.append(d.push(id));
        inc.append(d.flush());
        CHECK_EQ(inc, back);
    }
    CHECK_EQ(mismatches, 0);
}

} // namespace

TM_TEST("tokenizer: vectors llama-spm") { check_vocab("ggml-vocab-llama-spm.gguf"); }
TM_TEST("tokenizer: vectors phi-3") { check_vocab("ggml-vocab-phi-3.gguf"); }
TM_TEST("tokenizer: vectors llama-bpe") { check_vocab("ggml-vocab-llama-bpe.gguf"); }
TM_TEST("tokenizer: vectors qwen2") { check_vocab("ggml-vocab-qwen2.gguf"); }
TM_TEST("tokenizer: vectors qwen35") { check_vocab("ggml-vocab-qwen35.gguf"); }
TM_TEST("tokenizer: vectors gpt-2") { check_vocab("ggml-vocab-gpt-2.gguf"); }
TM_TEST("tokenizer: vectors deepseek-llm") { check_vocab("ggml-vocab-deepseek-llm.gguf"); }
TM_TEST("tokenizer: vectors deepseek-coder") { check_vocab("ggml-vocab-deepseek-coder.gguf"); }
TM_TEST("tokenizer: vectors starcoder") { check_vocab("ggml-vocab-starcoder.gguf"); }
TM_TEST("tokenizer: vectors falcon") { check_vocab("ggml-vocab-falcon.gguf"); }
