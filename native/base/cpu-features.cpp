#include "base/cpu-features.h"

#include <cpuid.h>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace tmill {

namespace {

uint64_t read_xcr0() {
    uint32_t eax = 0, edx = 0;
    __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
    return (uint64_t(edx) << 32) | eax;
}

// The vendor string of cpuid leaf 0 (ebx, edx, ecx: "GenuineIntel", "AuthenticAMD"; Hygon's Zen cores say
// "HygonGenuine").
cpu_vendor probe_vendor() {
    unsigned max_leaf = 0, ebx = 0, ecx = 0, edx = 0;
    if (!__get_cpuid(0, &max_leaf, &ebx, &ecx, &edx)) return cpu_vendor::other;
    char id[13];
    std::memcpy(id, &ebx, 4);
    std::memcpy(id + 4, &edx, 4);
    std::memcpy(id + 8, &ecx, 4);
    id[12] = '\0';
    if (std::strcmp(id, "GenuineIntel") == 0) return cpu_vendor::intel;
    if (std::strcmp(id, "AuthenticAMD") == 0 || std::strcmp(id, "HygonGenuine") == 0) return cpu_vendor::amd;
    return cpu_vendor::other;
}

cpu_features probe() {
    cpu_features f;
    f.vendor = probe_vendor();
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return f;
    const bool osxsave = ecx & (1u << 27);
    const bool fma = ecx & (1u << 12);
    const bool f16c = ecx & (1u << 29);
    const bool avx = ecx & (1u << 28);
    if (!osxsave || !avx) return f;
    const uint64_t xcr0 = read_xcr0();
    const bool ymm_saved = (xcr0 & 0x6) == 0x6;
    const bool zmm_saved = (xcr0 & 0xe6) == 0xe6;
    const bool amx_saved = (xcr0 & (3u << 17)) == (3u << 17);
    if (__get_cpuid_max(0, nullptr) < 7) return f;
    __cpuid_count(7, 0, eax, ebx, ecx, edx);
    const bool avx2 = ebx & (1u << 5);
    const bool bmi2 = ebx & (1u << 8);
    const bool avx512f = ebx & (1u << 16), avx512dq = ebx & (1u << 17);
    const bool avx512bw = ebx & (1u << 30), avx512vl = ebx & (1u << 31);
    const bool avx512vnni = ecx & (1u << 11);
    const bool amx_tile = edx & (1u << 24), amx_int8 = edx & (1u << 25);
    f.avx2 = ymm_saved && avx2 && fma && f16c && bmi2;
    f.avx512 = f.avx2 && zmm_saved && avx512f && avx512dq && avx512bw && avx512vl && avx512vnni;
    unsigned a1 = 0, b1 = 0, c1 = 0, d1 = 0;
    __cpuid_count(7, 1, a1, b1, c1, d1);
    f.avx512_bf16 = f.avx512 && (a1 & (1u << 5));
    f.amx = f.avx512 && amx_saved && amx_tile && amx_int8;   // until the OS grants the tile data (below)
    return f;
}

} // namespace

// Linux hands a process the AMX tile data state (XFEATURE_XTILEDATA, 8 KiB of registers) only on request;
// without it the first tile instruction raises SIGILL. cpu_features_get() asks once, and only when AMX would
// be used (TOKENMILL_ISA can rule it out first: the grant enlarges every signal frame of the process).
bool os_grants_amx_tile_data() {
#if defined(__linux__) && defined(SYS_arch_prctl)
    constexpr long arch_get_xcomp_perm = 0x1022, arch_req_xcomp_perm = 0x1023;
    constexpr unsigned xfeature_xtiledata = 18;
    if (syscall(SYS_arch_prctl, arch_req_xcomp_perm, long(xfeature_xtiledata)) != 0) return false;
    unsigned long permitted = 0;
    if (syscall(SYS_arch_prctl, arch_get_xcomp_perm, &permitted) != 0) return false;
    return (permitted >> xfeature_xtiledata) & 1u;
#else
    return false;
#endif
}

namespace {

cpu_features apply_cap(cpu_features f) {
    const char * cap = std::getenv("TOKENMILL_ISA");
    if (!cap) return f;
    if (std::strcmp(cap, "baseline") == 0) {
        cpu_features none;
        none.vendor = f.vendor;
        return none;
    }
    if (std::strcmp(cap, "avx2") == 0) {
        f.avx512 = f.avx512_bf16 = f.amx = false;
    }
    if (std::strcmp(cap, "avx512") == 0) f.amx = false;
    return f;
}

} // namespace

const cpu_features & cpu_features_get() {
    static const cpu_features features = [] {
        cpu_features f = apply_cap(probe());
        if (f.amx) f.amx = os_grants_amx_tile_data();
        return f;
    }();
    return features;
}

const char * cpu_isa_name() {
    const cpu_features & f = cpu_features_get();
    return f.amx ? "avx512+amx" : f.avx512 ? "avx512" : f.avx2 ? "avx2" : "baseline";
}

} // namespace tmill
