/* The emulator's own check for `npm run test:cpu-haswell` (scripts/test-cpu-haswell.mjs): built with
 * -DCANARY_AVX512 it executes one AVX-512 instruction, otherwise one AVX2 instruction. Under the emulated
 * AVX2-only CPU the first must die with SIGILL and the second must exit 0; if the AVX-512 one ran, the
 * emulator would execute AVX-512 and a leak into the engine's AVX2 code could not show. */
int main(void) {
#if defined(CANARY_AVX512)
    __asm__ volatile("vpxord %%zmm1, %%zmm1, %%zmm1" ::: "xmm1");
#else
    __asm__ volatile("vpaddd %%ymm1, %%ymm1, %%ymm1" ::: "xmm1");
#endif
    return 0;
}
