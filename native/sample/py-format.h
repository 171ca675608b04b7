// Number formatting that matches Python's str()/repr(), so validation messages read exactly like
// vLLM's ("top_p must be in (0, 1], got 1.5.").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tmill {

// repr() of the value the user wrote: the shortest decimal that round-trips through float32 (our
// parameters are float32, so 0.1f prints as 0.1, as Python prints the 0.1 it parsed): 1.0, 1e-05, inf.
std::string py_float(float v);
std::string py_int_list(const std::vector<int32_t> & v); // [1, 2, 3]

} // namespace tmill
