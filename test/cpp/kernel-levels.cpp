#include "kernel-levels.h"

#include "base/cpu-features.h"
#include "kernels/amx/amx.h"

#include <cstdlib>

namespace tm_test {

namespace {

bool g_used = false;

// Why a level the CPU (or TOKENMILL_ISA) does not grant was not run.
std::string not_run(const char * what) {
    const char * cap = std::getenv("TOKENMILL_ISA");
    return std::string("not run: ") + (cap && *cap ? std::string("TOKENMILL_ISA=") + cap + " caps the level, or " : "") +
           "the CPU/OS lacks " + what;
}

} // namespace

const std::vector<kernel_level> & kernel_levels() {
    using namespace tmill::kernels;
    static const std::vector<kernel_level> levels = [] {
        const tmill::cpu_features & f = tmill::cpu_features_get();
        std::vector<kernel_level> out{{"baseline", kernels_for(isa_level::baseline), false}};
        if (f.avx2) out.push_back({"avx2", kernels_for(isa_level::avx2), false});
        if (f.avx512) out.push_back({"avx512", kernels_for(isa_level::avx512), false});
        // The emulated levels start from the reference, as kernels_for builds every level: the members outside the
        // entry list (matmul_q8_0_x16) keep the reference where the level has no kernel of its own.
        // As kernels_for builds the real ones for this CPU: with AVX512-BF16, BF16 weights take the pair dot.
        auto emulated_bf16 = [&](kernel_table & t) {
            if (f.avx512_bf16) t.matmul_bf16 = avx512_emulated::matmul_bf16_dot;
        };
        if (f.avx2) {
            kernel_table t{};
            ref::fill(t);
            avx512_emulated::fill(t);
            emulated_bf16(t);
            t.isa = "avx512-emulated";
            out.push_back({"avx512-emulated", t, true});
        }
        if (f.amx) out.push_back({"avx512+amx", kernels_for(isa_level::avx512_amx), false});
        if (f.avx2) {
            kernel_table t{};
            ref::fill(t);
            avx512_emulated::fill(t);
            emulated_bf16(t);
            amx_emulated::fill(t);
            t.isa = "avx512+amx-emulated";
            out.push_back({"avx512+amx-emulated", t, true});
        }
        return out;
    }();
    g_used = true;
    return levels;
}

std::vector<std::string> kernel_levels_report() {
    if (!g_used) return {};
    const tmill::cpu_features & f = tmill::cpu_features_get();
    return {
        "baseline: run (scalar reference)",
        f.avx2 ? "avx2: run on the CPU" : "avx2: " + not_run("AVX2+FMA+F16C"),
        f.avx512 ? "avx512: run on the CPU" : "avx512: " + not_run("AVX-512 F/BW/VL/DQ+VNNI"),
        f.avx2 ? "avx512-emulated: run under SIMDe emulation (AVX-512 sources, AVX2 instructions)"
               : "avx512-emulated: " + not_run("AVX2, which the emulated build is compiled for"),
        f.amx ? "avx512+amx: run on the CPU (AMX tiles)"
              : "avx512+amx: " + not_run("AMX-TILE+AMX-INT8 with AVX-512, or the OS did not grant the tile data state (arch_prctl)"),
        f.avx2 ? "avx512+amx-emulated: run under the scalar tile emulator (AMX sources, on emulated AVX-512)"
               : "avx512+amx-emulated: " + not_run("AVX2, which the emulated build is compiled for"),
    };
}

} // namespace tm_test
