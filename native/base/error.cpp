#include "base/error.h"

namespace tmill {

const char * error_code_name(error_code code) {
    switch (code) {
        case error_code::invalid_argument: return "invalid_argument";
        case error_code::io:               return "io";
        case error_code::gguf_invalid:     return "gguf_invalid";
        case error_code::gguf_unsupported: return "gguf_unsupported";
        case error_code::tokenizer:        return "tokenizer";
        case error_code::out_of_memory:    return "out_of_memory";
        case error_code::disposed:         return "disposed";
        case error_code::engine_fault:     return "engine_fault";
        case error_code::internal:         return "internal";
        case error_code::grammar_invalid:  return "grammar_invalid";
    }
    return "internal";
}

} // namespace tmill
