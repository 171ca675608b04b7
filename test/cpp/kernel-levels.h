// The kernel levels the C++ kernel tests run, and what they could not run and why — never a silent skip:
// main.cpp prints kernel_levels_report() after the tests.
#pragma once

#include "kernels/kernels.h"

#include <string>
#include <vector>

namespace tm_test {

struct kernel_level {
    const char * name;               // "baseline", "avx2", "avx512", "avx512-emulated", "avx512+amx", "avx512+amx-emulated"
    tmill::kernels::kernel_table table;
    bool emulated;                   // built against SIMDe (and the tile emulator), run on AVX2 hardware
};

// Every level this machine runs: the baseline; AVX2 and AVX-512 where cpu_features_get() has them (so
// TOKENMILL_ISA caps them); AVX-512 + AMX where the CPU has AMX and the OS grants it; and the AVX-512 kernels
// under SIMDe emulation, and the AMX kernels under the scalar tile emulator on top of them, wherever AVX2
// runs (those builds use the AVX2 instructions). The first call notes that the kernel tests ran, for the report.
const std::vector<kernel_level> & kernel_levels();

// One line per level: run for real, run under emulation, or not run and why. Empty when no test asked for
// the levels (e.g. a filtered run without kernel tests).
std::vector<std::string> kernel_levels_report();

} // namespace tm_test
