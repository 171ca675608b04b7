import { defineConfig } from 'vitest/config';
import base from './vitest.config.mjs';

// `npm run test:cpu-haswell` (scripts/test-cpu-haswell.mjs runs vitest itself under qemu with this config):
// the tests whose outcome depends on the CPU, on an emulated AVX2-only CPU. Emulation is 10 to 40 times
// slower than the host, hence the timeouts. docs/testing.md says what the subset covers and why.
export default defineConfig({
  test: {
    ...base.test,
    include: [
      'test/haswell/**/*.test.ts',
      'test/parity/logits.test.ts',
      'test/native/engine-batching.test.ts',
    ],
    exclude: ['node_modules/**'],
    setupFiles: ['test/haswell/setup.ts'],
    testTimeout: 900_000,
    hookTimeout: 1_200_000,
  },
});
