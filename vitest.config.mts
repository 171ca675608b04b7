import { defineConfig } from 'vitest/config';

// Addon tests run in forked workers so a native crash fails one file, not the run (docs/testing.md).
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Real models (PyPI downloads, minutes of CPU): npm run test:real and test:real-large; test/real joins
    // npm test once its conversations all match llama.cpp (see test/real/chat-parity.ts). test/cuda needs
    // the CUDA variant: npm run test:cuda (vitest.cuda.config.mts).
    exclude: ['test/peer/**', 'test/real/**', 'test/real-large/**', 'test/cuda/**', 'node_modules/**'],
    globalSetup: ['test/helpers/global-setup.ts'],
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 300_000,
  },
});
