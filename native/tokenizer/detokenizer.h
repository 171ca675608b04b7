// Incremental detokenizer: fed one token id at a time (per sequence, one thread), returns the text that
// became final. Never emits a broken UTF-8 sequence: an incomplete code point is held back until later
// bytes complete it; bytes that can never complete one become U+FFFD (one per maximal ill-formed
// subpart, like Python's errors="replace"); flush() turns a held incomplete tail into one U+FFFD.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "tokenizer/vocab.h"

namespace tmill::tok {

class incremental_detokenizer {
public:
    incremental_detokenizer(const vocab & v, detok_options opt);

    // Returns the new text; the view stays valid until the next call. Precondition: id in range
    // (throws tmill::error(invalid_argument) otherwise).
    std::string_view push(int32_t id);
    // Ends the sequence: returns what was held back (U+FFFD for an incomplete code point).
    std::string_view flush();
    // Starts a new sequence with the same options.
    void reset();
    // The output continues `prompt` (n ids): when the prompt holds text, the first output piece keeps
    // its SentencePiece leading space, as vLLM's detokenizer (primed with the prompt) keeps it.
    void continue_after(const int32_t * prompt, size_t n);

private:
    void drain(bool final);

    const vocab * v_;
    detok_options opt_;
    std::string pending_;  // bytes not yet emitted: an incomplete UTF-8 tail (< 4 bytes between calls)
    std::string delta_;    // the text returned by the last call
    std::string piece_;    // scratch for one token's bytes
    bool started_ = false;  // something has been emitted (SPM leading-space rule)
};

// True when some id in ids[0, n) is a non-special token with a non-empty piece: decoded text that a
// following SentencePiece piece continues (its leading space is then kept).
bool holds_text(const vocab & v, const int32_t * ids, size_t n);

} // namespace tmill::tok
