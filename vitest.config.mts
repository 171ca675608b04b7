import { defineConfig } from 'vitest/config';

// Addon tests run in forked workers so a native crash fails one file, not the run (docs/testing.md).
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // test/real (the small real models' chat parity with llama.cpp, fetched from PyPI on first use) runs
    // here; the 1.5B model's in npm run test:real-large. test/cuda needs the CUDA variant: npm run test:cuda
    // (vitest.cuda.config.mts). test/haswell runs only under qemu: npm run test:cpu-haswell.
    exclude: ['test/peer/**', 'test/real-large/**', 'test/cuda/**', 'test/haswell/**', 'node_modules/**'],
    globalSetup: ['test/helpers/global-setup.ts'],
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 300_000,
  },
});
