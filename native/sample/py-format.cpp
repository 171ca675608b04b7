#include "sample/py-format.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace tmill {

// NOTE(py-format): Python's repr is the shortest string that round-trips, written in fixed notation
// for exponents -4..15 and scientific otherwise, always with a '.0' or exponent to mark a float.
std::string py_float(float v) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    char buf[64];
    int prec = 1;
    for (; prec <= 9; ++prec) {
        std::snprintf(buf, sizeof buf, "%.*e", prec - 1, (double)v);
        if (std::strtof(buf, nullptr) == v) break;
    }
    // buf holds d.ddde±XX with `prec` significant digits; rebuild in Python's layout.
    std::string s(buf);
    size_t e_pos = s.find('e');
    int exp10 = std::atoi(s.c_str() + e_pos + 1);
    std::string mant = s.substr(0, e_pos);
    bool neg = mant[0] == '-';
    if (neg) mant.erase(0, 1);
    std::string digits;
    for (char c : mant) if (c != '.') digits += c;
    while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
    std::string out;
    if (exp10 >= 16 || exp10 < -4) {
        out = digits.substr(0, 1);
        if (digits.size() > 1) out += "." + digits.substr(1);
        char eb[16];
        std::snprintf(eb, sizeof eb, "e%c%02d", exp10 < 0 ? '-' : '+', std::abs(exp10));
        out += eb;
    } else if (exp10 >= 0) {
        if ((int)digits.size() <= exp10 + 1) {
            out = digits + std::string(exp10 + 1 - digits.size(), '0') + ".0";
        } else {
            out = digits.substr(0, exp10 + 1) + "." + digits.substr(exp10 + 1);
        }
    } else {
        out = "0." + std::string(-exp10 - 1, '0') + digits;
    }
    return neg ? "-" + out : out;
}

std::string py_int_list(const std::vector<int32_t> & v) {
    std::string out = "[";
    for (size_t i = 0; i < v.size(); ++i) {
        if (i) out += ", ";
        out += std::to_string(v[i]);
    }
    return out + "]";
}

} // namespace tmill
