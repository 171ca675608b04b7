// What the CPU (and the OS, via xgetbv) lets us run. Probed once; kernel dispatch reads it.
#pragma once

namespace tmill {

struct cpu_features {
    bool avx2 = false;      // AVX2 + FMA + F16C, with OS-saved YMM state
    bool avx512 = false;    // AVX-512 F/BW/VL/DQ + VNNI, with OS-saved ZMM/opmask state
    bool avx512_bf16 = false;
    bool amx = false;       // AMX tiles (informational until an AMX kernel exists)
};

// The machine's features, probed on first call. TOKENMILL_ISA=baseline|avx2|avx512 caps what is
// reported (to test the fallbacks on a machine that has more).
const cpu_features & cpu_features_get();

// Name of the best ISA level in use: "avx512", "avx2" or "baseline".
const char * cpu_isa_name();

} // namespace tmill
