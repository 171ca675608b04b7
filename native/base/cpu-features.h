// What the CPU (and the OS, via xgetbv) lets us run. Probed once; kernel dispatch reads it.
#pragma once

#include "base/cpu-vendor.h"

namespace tmill {

struct cpu_features {
    bool avx2 = false;      // AVX2 + FMA + F16C, with OS-saved YMM state
    bool avx512 = false;    // AVX-512 F/BW/VL/DQ + VNNI, with OS-saved ZMM/opmask state
    bool avx512_bf16 = false;
    bool amx = false;       // AMX-TILE + AMX-INT8 with OS-saved tile state, the OS's grant of the tile data
                            // to this process (arch_prctl), and avx512 (the AMX kernels fold with it)
    cpu_vendor vendor = cpu_vendor::other;   // from cpuid leaf 0; TOKENMILL_ISA leaves it as it is
};

// The machine's features, probed on first call. TOKENMILL_ISA=baseline|avx2|avx512 caps the instruction sets
// reported (to test the fallbacks on a machine that has more; avx512 rules out AMX).
const cpu_features & cpu_features_get();

// Asks the OS (Linux arch_prctl ARCH_REQ_XCOMP_PERM) to grant this process the AMX tile data state and
// reports whether it is granted (ARCH_GET_XCOMP_PERM); false on a CPU or OS without AMX.
bool os_grants_amx_tile_data();

// Name of the best ISA level in use: "avx512+amx", "avx512", "avx2" or "baseline".
const char * cpu_isa_name();

} // namespace tmill
