// NOTE(detokenizer): the whole-sequence detokenize() is defined as running this incremental
// detokenizer over the ids and flushing, so the concatenated deltas equal it by construction. The text
// of a sequence is the concatenation of token pieces, as vLLM's fast detokenizer (HF tokenizers'
// DecodeStream) produces it: skip_special_tokens drops CONTROL/UNKNOWN tokens; for an SPM vocab with
// add_space_prefix the single leading space of the output is removed (HF's Strip decoder, applied
// after Fuse). spaces_between_special_tokens inserts nothing either way: vLLM only uses it to suppress
// spaces a decoder put between consecutive added tokens, and our byte-level/SPM decoders put none.
// (vLLM's slow-tokenizer path would join added tokens with ' '; models served with a fast tokenizer,
// which is nearly all, never see that.)
#include "tokenizer/detokenizer.h"

#include "base/error.h"
#include "tokenizer/unicode.h"

namespace tmill::tok {

namespace {

int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

// Number of bytes a lead byte announces, 0 when it cannot start a sequence.
size_t lead_len(uint8_t b) {
    if (b < 0x80) return 1;
    if (b >= 0xC2 && b <= 0xDF) return 2;
    if (b >= 0xE0 && b <= 0xEF) return 3;
    if (b >= 0xF0 && b <= 0xF4) return 4;
    return 0;
}

// Whether `c` may follow `lead` at position k (1-based) of its sequence (no overlongs, no surrogates).
bool valid_cont(uint8_t lead, size_t k, uint8_t c) {
    if (k == 1) {
        if (lead == 0xE0) return c >= 0xA0 && c <= 0xBF;
        if (lead == 0xED) return c >= 0x80 && c <= 0x9F;
        if (lead == 0xF0) return c >= 0x90 && c <= 0xBF;
        if (lead == 0xF4) return c >= 0x80 && c <= 0x8F;
    }
    return (c & 0xC0) == 0x80;
}

const char k_replacement[] = "\xEF\xBF\xBD";

} // namespace

void vocab::append_piece(int32_t id, std::string & out) const {
    const token_type t = get_type(id);
    const std::string_view text = token_text(id);
    switch (t) {
        case token_type::control:
        case token_type::unknown:
        case token_type::user_defined:
            out.append(text);
            return;
        case token_type::unused:
        case token_type::undefined:
            return;
        case token_type::byte:
            if (type_ == vocab_type::spm) {
                if (text.size() == 6 && text.substr(0, 3) == "<0x" && text[5] == '>' &&
                    hex_digit(text[3]) >= 0 && hex_digit(text[4]) >= 0) {
                    out.push_back(char(hex_digit(text[3]) * 16 + hex_digit(text[4])));
                } else {
                    out.append(text);
                }
                return;
            }
            break;  // BPE: decode like a normal token
        case token_type::normal:
            break;
    }
    if (type_ == vocab_type::spm) {
        for (size_t i = 0; i < text.size();) {
            if (text.compare(i, 3, "\xE2\x96\x81") == 0) { out.push_back(' '); i += 3; }
            else out.push_back(text[i++]);
        }
        return;
    }
    // BPE: every code point of the text stands for one byte.
    const auto * p = reinterpret_cast<const uint8_t *>(text.data());
    for (size_t i = 0; i < text.size();) {
        const size_t n = std::min(utf8_len(p[i]), text.size() - i);
        uint32_t cpt = p[i];
        if (n == 2) cpt = ((p[i] & 0x1F) << 6) | (p[i + 1] & 0x3F);
        const int b = (n <= 2) ? cpt_to_byte(cpt) : -1;
        if (b >= 0) out.push_back(char(b)); else out.append(text.substr(i, n));
        i += n;
    }
}

std::string vocab::token_to_piece(int32_t id) const {
    std::string out;
    append_piece(id, out);
    return out;
}

std::string vocab::detokenize(const int32_t * ids, size_t n, const detok_options & opt) const {
    TM_CHECK(ids != nullptr || n == 0, invalid_argument, "detokenize: null ids");
    incremental_detokenizer d(*this, opt);
    std::string out;
    for (size_t i = 0; i < n; ++i) out.append(d.push(ids[i]));
    out.append(d.flush());
    return out;
}

incremental_detokenizer::incremental_detokenizer(const vocab & v, detok_options opt) : v_(&v), opt_(opt) {
    pending_.reserve(64);
    delta_.reserve(64);
    piece_.reserve(64);
}

void incremental_detokenizer::reset() {
    pending_.clear();
    delta_.clear();
    started_ = false;
}

void incremental_detokenizer::continue_after(const int32_t * prompt, size_t n) {
    if (holds_text(*v_, prompt, n)) started_ = true;
}

bool holds_text(const vocab & v, const int32_t * ids, size_t n) {
    std::string piece;
    for (size_t i = n; i-- > 0;) {
        if (!v.valid(ids[i]) || v.is_special(ids[i])) continue;
        piece.clear();
        v.append_piece(ids[i], piece);
        if (!piece.empty()) return true;
    }
    return false;
}

std::string_view incremental_detokenizer::push(int32_t id) {
    TM_CHECK(v_->valid(id), invalid_argument, "token id " + std::to_string(id) + " is out of range");
    delta_.clear();
    if (opt_.skip_special_tokens && v_->is_special(id)) return delta_;
    piece_.clear();
    v_->append_piece(id, piece_);
    size_t skip = 0;
    if (!started_ && !piece_.empty()) {
        started_ = true;
        if (v_->type() == vocab_type::spm && v_->add_space_prefix() && piece_[0] == ' ') skip = 1;
    }
    pending_.append(piece_, skip, std::string::npos);
    drain(false);
    return delta_;
}

std::string_view incremental_detokenizer::flush() {
    delta_.clear();
    drain(true);
    return delta_;
}

void incremental_detokenizer::drain(bool final) {
    const auto * p = reinterpret_cast<const uint8_t *>(pending_.data());
    const size_t n = pending_.size();
    size_t i = 0;
    while (i < n) {
        const size_t len = lead_len(p[i]);
        if (len == 1) { delta_.push_back(char(p[i])); ++i; continue; }
        if (len == 0) { delta_.append(k_replacement); ++i; continue; }
        size_t k = 1;
        while (k < len && i + k < n && valid_cont(p[i], k, p[i + k])) ++k;
        if (k == len) {
            delta_.append(pending_, i, len);
            i += len;
        } else if (i + k == n && !final) {
            break;  // incomplete but may still complete: hold it back
        } else {
            delta_.append(k_replacement);  // one U+FFFD for the maximal ill-formed subpart
            i += k;
        }
    }
    pending_.erase(0, i);
}

} // namespace tmill::tok
