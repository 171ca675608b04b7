// xargs: the request's `vllm_xargs` as the native core sees it — a key → value map whose values are
// numbers, strings or lists of those. Only custom logits processors read it; nothing built in does.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace tmill {

struct xarg_value {
    enum class kind { number, string, list };
    kind type = kind::number;
    double number = 0.0;              // valid when type == number
    std::string str;                  // valid when type == string
    std::vector<xarg_value> items;    // valid when type == list

    static xarg_value of_number(double v) { xarg_value x; x.type = kind::number; x.number = v; return x; }
    static xarg_value of_string(std::string v) { xarg_value x; x.type = kind::string; x.str = std::move(v); return x; }
    static xarg_value of_list(std::vector<xarg_value> v) { xarg_value x; x.type = kind::list; x.items = std::move(v); return x; }
};

using xargs_map = std::map<std::string, xarg_value>;

} // namespace tmill
