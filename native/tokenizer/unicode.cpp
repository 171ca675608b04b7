// NOTE(unicode): classification is a binary search over the generated run table (a few thousand runs),
// with a direct table for ASCII since that is the overwhelmingly common case in the split loops.
#include "tokenizer/unicode.h"

#include <algorithm>

namespace tmill::tok {

namespace {

struct ascii_table {
    uint8_t cls[128];
    ascii_table() {
        for (uint32_t c = 0; c < 128; ++c) {
            const uint32_t * it = std::upper_bound(k_category_run_start, k_category_run_start + k_category_n_runs, c);
            cls[c] = k_category_run_class[(it - k_category_run_start) - 1];
        }
    }
};

struct byte_map {
    uint32_t to_cpt[256];
    int16_t from_cpt[324];  // byte-level code points are all < 324
    byte_map() {
        std::fill(from_cpt, from_cpt + 324, int16_t(-1));
        // Printable bytes map to themselves; the other 68 bytes map to 256, 257, ... in byte order.
        uint32_t next = 256;
        for (uint32_t b = 0; b < 256; ++b) {
            const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
            to_cpt[b] = printable ? b : next++;
            from_cpt[to_cpt[b]] = int16_t(b);
        }
    }
};

const ascii_table & ascii() { static const ascii_table t; return t; }
const byte_map & bytes() { static const byte_map m; return m; }

} // namespace

cpt_class classify(uint32_t cpt) {
    if (cpt < 128) return cpt_class(ascii().cls[cpt]);
    if (cpt > 0x10FFFF) return cpt_class::undefined;
    const uint32_t * it = std::upper_bound(k_category_run_start, k_category_run_start + k_category_n_runs, cpt);
    return cpt_class(k_category_run_class[(it - k_category_run_start) - 1]);
}

bool is_whitespace(uint32_t cpt) {
    for (size_t i = 0; i < k_whitespace_n_ranges; ++i) {
        if (cpt < k_whitespace_ranges[i][0]) return false;
        if (cpt <= k_whitespace_ranges[i][1]) return true;
    }
    return false;
}

void decode_utf8(std::string_view s, std::vector<uint32_t> & out) {
    out.clear();
    out.reserve(s.size());
    const auto * p = reinterpret_cast<const uint8_t *>(s.data());
    const size_t n = s.size();
    size_t i = 0;
    while (i < n) {
        const uint8_t b = p[i];
        if (b < 0x80) { out.push_back(b); ++i; continue; }
        size_t len = 0;
        uint32_t cpt = 0;
        if ((b & 0xE0) == 0xC0) { len = 2; cpt = b & 0x1F; }
        else if ((b & 0xF0) == 0xE0) { len = 3; cpt = b & 0x0F; }
        else if ((b & 0xF8) == 0xF0) { len = 4; cpt = b & 0x07; }
        bool ok = len != 0 && i + len <= n;
        for (size_t k = 1; ok && k < len; ++k) {
            if ((p[i + k] & 0xC0) != 0x80) ok = false;
            else cpt = (cpt << 6) | (p[i + k] & 0x3F);
        }
        if (!ok) { out.push_back(0xFFFD); ++i; continue; }
        out.push_back(cpt);
        i += len;
    }
}

void append_utf8(uint32_t cpt, std::string & out) {
    if (cpt < 0x80) {
        out.push_back(char(cpt));
    } else if (cpt < 0x800) {
        out.push_back(char(0xC0 | (cpt >> 6)));
        out.push_back(char(0x80 | (cpt & 0x3F)));
    } else if (cpt < 0x10000) {
        out.push_back(char(0xE0 | (cpt >> 12)));
        out.push_back(char(0x80 | ((cpt >> 6) & 0x3F)));
        out.push_back(char(0x80 | (cpt & 0x3F)));
    } else {
        out.push_back(char(0xF0 | (cpt >> 18)));
        out.push_back(char(0x80 | ((cpt >> 12) & 0x3F)));
        out.push_back(char(0x80 | ((cpt >> 6) & 0x3F)));
        out.push_back(char(0x80 | (cpt & 0x3F)));
    }
}

uint32_t byte_to_cpt(uint8_t b) { return bytes().to_cpt[b]; }

int cpt_to_byte(uint32_t cpt) { return cpt < 324 ? bytes().from_cpt[cpt] : -1; }

} // namespace tmill::tok
