// e^x for W float lanes, bit for bit what glibc's expf returns on an FMA machine (__expf_fma, glibc 2.28 and
// later), so a vectorised softmax gives exactly the values of a loop calling expf — which is what llama.cpp's
// CPU flash attention calls, and what our attention reference follows (docs/kernels.md, "The attention's
// exponentials"). Written once over the level's traits (their f64 operations), compiled per ISA.
#pragma once

#include <cstdint>

namespace tmill::kernels {
namespace {

// glibc's __exp2f_data.tab: the IEEE bits of 2^(i/32), less i << 47, so that adding the low bits of the
// rounded k (k << 47) lands k / 32 in the exponent field while i = k mod 32 picks the entry.
alignas(64) constexpr uint64_t k_exp2_32nds[32] = {
    0x3ff0000000000000ull, 0x3fefd9b0d3158574ull, 0x3fefb5586cf9890full, 0x3fef9301d0125b51ull,
    0x3fef72b83c7d517bull, 0x3fef54873168b9aaull, 0x3fef387a6e756238ull, 0x3fef1e9df51fdee1ull,
    0x3fef06fe0a31b715ull, 0x3feef1a7373aa9cbull, 0x3feedea64c123422ull, 0x3feece086061892dull,
    0x3feebfdad5362a27ull, 0x3feeb42b569d4f82ull, 0x3feeab07dd485429ull, 0x3feea47eb03a5585ull,
    0x3feea09e667f3bcdull, 0x3fee9f75e8ec5f74ull, 0x3feea11473eb0187ull, 0x3feea589994cce13ull,
    0x3feeace5422aa0dbull, 0x3feeb737b0cdc5e5ull, 0x3feec49182a3f090ull, 0x3feed503b23e255dull,
    0x3feee89f995ad3adull, 0x3feeff76f2fb5e47ull, 0x3fef199bdd85529cull, 0x3fef3720dcef9069ull,
    0x3fef5818dcfba487ull, 0x3fef7c97337b9b5full, 0x3fefa4afa2a490daull, 0x3fefd0765b6e4540ull,
};

// The normal path of glibc's expf on x widened to double, with the FMA contractions its FMA build makes:
// z = x·32/ln2, k = round(z) through the 1.5·2^52 shift (the shift added by the same FMA), r = z - k (one
// FMA), 2^(k/32) from the table, and p(r) = (C0·r + C1)·r² + (C2·r + 1); the result p·2^(k/32), rounded to
// float by the caller.
template <typename isa>
typename isa::f64 expf_glibc_normal(typename isa::f64 x) {
    const typename isa::f64 inv_ln2_32 = isa::set1_f64(0x1.71547652b82fep+5);
    const typename isa::f64 shift = isa::set1_f64(0x1.8p+52);
    const typename isa::f64 shifted = isa::fmadd_f64(inv_ln2_32, x, shift);
    const typename isa::f64 scale = isa::exp2_32nds(k_exp2_32nds, shifted);
    const typename isa::f64 r = isa::fmsub_f64(inv_ln2_32, x, isa::sub_f64(shifted, shift));
    const typename isa::f64 z = isa::fmadd_f64(r, isa::set1_f64(0x1.c6af84b912394p-20), isa::set1_f64(0x1.ebfce50fac4f3p-13));
    const typename isa::f64 y = isa::fmadd_f64(r, isa::set1_f64(0x1.62e42ff0c52d6p-6), isa::set1_f64(1.0));
    return isa::mul_f64(isa::fmadd_f64(z, isa::mul_f64(r, r), y), scale);
}

// glibc's expf lane by lane: the normal path, then its special cases — NaN returns x + x; above
// 0x1.62e42ep6 overflows to +inf; below -0x1.9fe368p6 (and -inf) underflows to 0; between that and
// -0x1.9d1d9ep6 it returns the smallest subnormal (its "may underflow" value, 0x1.4p-75f squared).
template <typename isa>
typename isa::f32 expf_glibc(typename isa::f32 x) {
    typename isa::f32 y = isa::narrow_f64(expf_glibc_normal<isa>(isa::widen_lo(x)), expf_glibc_normal<isa>(isa::widen_hi(x)));
    y = isa::select_less(x, isa::set1(-0x1.9d1d9ep6f), isa::set1(0x1p-149f), y);
    y = isa::select_less(x, isa::set1(-0x1.9fe368p6f), isa::zero(), y);
    y = isa::select_less(isa::set1(0x1.62e42ep6f), x, isa::set1(__builtin_inff()), y);
    return isa::select_nan(x, isa::add(x, x), y);
}

} // namespace
} // namespace tmill::kernels
