import { defineConfig } from 'vitest/config';

// `npm run test:cuda`: the tests of the CUDA variant (build-cuda/Release/tokenmill-cuda.node), apart from
// `npm test` because they need nvcc to build it. They pass on a machine without a GPU too: there they
// check that the variant loads and says why it cannot run.
export default defineConfig({
  test: {
    include: ['test/cuda/**/*.test.ts'],
    pool: 'forks',
    maxWorkers: 1,
    testTimeout: 60_000,
    hookTimeout: 300_000,
  },
});
