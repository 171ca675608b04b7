// `npm run test:cpu-haswell` only (docs/testing.md, "AVX2-only CPUs under qemu"): the run really is on an
// AVX2-only CPU. Dispatch picks avx2 by itself from cpuid, a child process started the way tests start them
// is emulated too, and node-llama-cpp's llama.cpp chose its own AVX2 build (ggml scores its CPU variants by
// cpuid), so the parity tests of this run compare tokenmill's avx2 kernels with llama.cpp's haswell build.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { expect, inject, test } from 'vitest';
import { kernelLevel } from '../../lib/index.js';

test('dispatch picks avx2 without TOKENMILL_ISA', () => {
  expect(process.env.TOKENMILL_ISA).toBeUndefined();
  expect(kernelLevel()).toBe('avx2');
});

test('a child started with process.execPath runs emulated too', () => {
  const load = path.resolve(__dirname, '..', '..', 'dist', 'native', 'load.js');
  const out = execFileSync(process.execPath, ['-e', `process.stdout.write(require(${JSON.stringify(load)}).native().cpuIsa())`], { encoding: 'utf8' });
  expect(out).toBe('avx2');
});

test("node-llama-cpp loaded llama.cpp's haswell build, compiled without AVX-512", () => {
  const peer = inject('peerCpuBuild');
  expect(peer, 'node-llama-cpp could not be loaded: see the "run environment" line').not.toBeNull();
  expect(peer!.variant).toBe('haswell');
  expect(peer!.features).toMatch(/AVX2 = 1/);
  expect(peer!.features).not.toMatch(/AVX512\w* = 1/);
});
