// tmill::error — the one exception type of the native core. It carries a stable code (its string form
// reaches JS as `err.code`) and a human message. The addon converts it at every entry point, so no
// C++ exception ever crosses N-API and library code never aborts the process.
#pragma once

#include <stdexcept>
#include <string>

namespace tmill {

enum class error_code {
    invalid_argument,   // a caller passed a bad value (maps to TypeError/RangeError-like JS errors)
    io,                 // open/read/mmap failed
    gguf_invalid,       // malformed, truncated or hostile GGUF file
    gguf_unsupported,   // well-formed but unsupported (version 1, unknown tensor type, architecture)
    tokenizer,          // vocabulary missing or inconsistent
    out_of_memory,      // an allocation the caller asked for could not be satisfied
    disposed,           // object used after close/dispose
    engine_fault,       // the engine thread failed; the engine is unusable
    internal,           // a broken internal invariant
    grammar_invalid,    // a grammar (GBNF) text failed to parse or validate
};

const char * error_code_name(error_code code);

class error : public std::runtime_error {
public:
    error(error_code code, const std::string & message) : std::runtime_error(message), code_(code) {}
    error_code code() const { return code_; }
    const char * code_name() const { return error_code_name(code_); }

private:
    error_code code_;
};

} // namespace tmill

// TM_CHECK(cond, code, message): always on; throws tmill::error when cond is false. `message` may be any
// expression yielding std::string, evaluated only on failure.
#define TM_CHECK(cond, code, message)                                        \
    do {                                                                     \
        if (!(cond)) throw ::tmill::error(::tmill::error_code::code, (message));   \
    } while (0)
