// Pre-tokenizers of the byte-level BPE vocabs: split text into words before BPE merges, reproducing the
// word boundaries of llama.cpp's unicode_regex_split for each `tokenizer.ggml.pre` value we support.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tmill::tok {

enum class pre_type {
    default_,        // llama.cpp's LLAMA_VOCAB_PRE_TYPE_DEFAULT (also used for unknown names)
    llama3,          // llama-bpe, llama3, llama-v3, falcon3, ...
    qwen2,
    qwen35,
    gpt2,
    deepseek_llm,
    deepseek_coder,
    starcoder,
    falcon,
};

// Maps a `tokenizer.ggml.pre` name to its pre_type. Returns false for an unknown name.
bool pre_type_from_name(std::string_view name, pre_type & out);
const char * pre_type_name(pre_type type);

// Splits `cpts` (the text as code points) into words. `lens` receives the length in code points of each
// word, in order; they sum to cpts.size().
void pre_tokenize(pre_type type, const std::vector<uint32_t> & cpts, std::vector<size_t> & lens);

} // namespace tmill::tok
