#include "kernels/kernels.h"

#include "base/cpu-features.h"
#include "kernels/amx/amx.h"

namespace tmill::kernels {

kernel_table kernels_for(isa_level level, cpu_vendor vendor, bool avx512_bf16) {
    kernel_table t{};
    ref::fill(t);
    t.isa = "baseline";
    if (level >= isa_level::avx2) {
        avx2::fill(t);
        t.isa = "avx2";
    }
    if (level >= isa_level::avx512) {
        avx512::fill(t);
        if (vendor == cpu_vendor::amd) {   // NOTE(q4-k-x16-prefetch)
            t.matmul_q4_k_x16 = avx512::matmul_q4_k_x16_hw_stream;
            t.matmul_q6_k_x16 = avx512::matmul_q6_k_x16_hw_stream;
        }
        if (avx512_bf16) t.matmul_bf16 = avx512::matmul_bf16_dot;   // NOTE(bf16-dot)
        t.isa = "avx512";
    }
    if (level >= isa_level::avx512_amx) {
        amx::fill(t);
        t.isa = "avx512+amx";
    }
    return t;
}

kernel_table kernels_for(isa_level level, cpu_vendor vendor) { return kernels_for(level, vendor, cpu_features_get().avx512_bf16); }

kernel_table kernels_for(isa_level level) { return kernels_for(level, cpu_features_get().vendor); }

size_t attend_f16_heads_scratch(int64_t n_heads, int64_t head_dim) {
    return size_t(n_heads) * size_t(2 * head_dim + 2 * k_attend_key_chunk + 2) + size_t(k_attend_key_chunk) * size_t(head_dim) + 16;
}

const kernel_table & kernels_get() {
    static const kernel_table table = [] {
        const cpu_features & f = cpu_features_get();
        return kernels_for(f.amx      ? isa_level::avx512_amx
                           : f.avx512 ? isa_level::avx512
                           : f.avx2   ? isa_level::avx2
                                      : isa_level::baseline);
    }();
    return table;
}

} // namespace tmill::kernels
