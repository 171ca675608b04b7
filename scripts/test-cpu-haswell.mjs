#!/usr/bin/env node
// `npm run test:cpu-haswell`: the CPU-dependent tests on an emulated AVX2-only CPU (qemu-user, TCG), so that
// a machine with AVX-512 proves what an AVX2-only one (an AMD EPYC before Zen 4, a Haswell) would run:
// dispatch picks avx2 from cpuid by itself, and no AVX-512 instruction is executed — qemu's TCG has no
// AVX-512, so one raises SIGILL and kills the run. Not part of `npm test` (docs/testing.md says why).
//   1. the emulator's own check: an AVX2 instruction runs, an AVX-512 one dies with SIGILL;
//   2. the C++ unit tests (every test, kernel levels reported), emulated;
//   3. vitest with vitest.haswell.config.mts, the whole Node process tree emulated.
// Needs qemu-user (`apt-get install qemu-user`), a C compiler for the check, and the builds of `npm test`
// (the npm script builds them first).
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const QEMU = 'qemu-x86_64';
// Haswell: AVX2, FMA, F16C, BMI2 and no AVX-512 — the features of tokenmill's avx2 level and of ggml's
// `haswell` CPU variant. The removed flags are ones TCG cannot emulate (it warns about each, per thread).
const QEMU_CPU = 'Haswell,-pcid,-x2apic,-tsc-deadline,-invpcid,-hle,-rtm';
const qemuArgs = ['-cpu', QEMU_CPU];

class CheckFailed extends Error {}

function fail(message) {
  throw new CheckFailed(message);
}

function run(cmd, args, options = {}) {
  return spawnSync(cmd, args, { cwd: root, encoding: 'utf8', maxBuffer: 1 << 28, ...options });
}

function requireTools() {
  if (process.platform !== 'linux' || process.arch !== 'x64') fail('needs Linux on x86-64 (qemu-user emulates this architecture for itself)');
  const version = run(QEMU, ['--version']);
  if (version.error || version.status !== 0) {
    fail(`${QEMU} not found: install qemu-user (Debian/Ubuntu: apt-get install qemu-user). This check is not part of npm test.`);
  }
  console.log(`test:cpu-haswell: ${version.stdout.split('\n')[0]}, -cpu ${QEMU_CPU}`);
  if (process.env.TOKENMILL_ISA) fail(`unset TOKENMILL_ISA (${process.env.TOKENMILL_ISA}): the run must show what dispatch picks by itself`);
  for (const built of ['build/Release/tokenmill_cpp_tests', 'build/Release/tokenmill.node', 'dist/index.js']) {
    if (!existsSync(path.join(root, built))) fail(`${built} is missing: npm run build:cpp-tests && npm run build:ts`);
  }
}

// An AVX2 instruction must run and an AVX-512 one must die with SIGILL under the emulated CPU; otherwise
// this run could not tell an AVX-512 leak from correct code.
function checkEmulator(tmp) {
  const cc = process.env.CC ?? 'cc';
  const source = path.join(root, 'test', 'haswell', 'isa-canary.c');
  for (const [name, defines, expectSigill] of [['avx2', [], false], ['avx512', ['-DCANARY_AVX512'], true]]) {
    const exe = path.join(tmp, `canary-${name}`);
    const built = run(cc, ['-O1', ...defines, '-o', exe, source]);
    if (built.error || built.status !== 0) fail(`building ${source} with ${cc} failed: ${built.error?.message ?? built.stderr}`);
    const r = run(QEMU, [...qemuArgs, exe]);
    const died = r.signal === 'SIGILL';
    if (died !== expectSigill || (!expectSigill && r.status !== 0)) {
      fail(`emulator check: the ${name} instruction ${died ? 'raised SIGILL' : `exited with ${r.status ?? r.signal}`} under -cpu ${QEMU_CPU}; expected ${expectSigill ? 'SIGILL' : 'exit 0'}`);
    }
  }
  console.log('test:cpu-haswell: emulator check: AVX2 runs, AVX-512 raises SIGILL');
}

function runCppTests() {
  const started = Date.now();
  const r = run(QEMU, [...qemuArgs, path.join(root, 'build', 'Release', 'tokenmill_cpp_tests')]);
  const out = `${r.stdout}${r.stderr}`;
  const seconds = ((Date.now() - started) / 1000).toFixed(0);
  const levels = out.slice(out.indexOf('kernel levels:'));
  process.stdout.write(out.split('\n').filter((l) => /^FAIL|^ {4}/.test(l)).map((l) => `${l}\n`).join(''));
  if (r.signal) fail(`C++ tests killed by ${r.signal}${r.signal === 'SIGILL' ? ' (an instruction the AVX2-only CPU lacks was executed)' : ''}; last output:\n${out.slice(-2000)}`);
  const counts = /^(\d+) passed, (\d+) failed$/m.exec(out);
  if (!counts) fail(`the C++ test runner printed no "N passed, M failed" line:\n${out.slice(-2000)}`);
  console.log(`test:cpu-haswell: C++ tests: ${counts[0]} (${seconds} s emulated)\n${levels.split('\n').slice(0, 7).join('\n')}`);
  // The runner's level report must show the emulated CPU: avx2 on the CPU, avx512 not run.
  if (!/^ {2}avx2: run on the CPU$/m.test(out) || !/^ {2}avx512: not run/m.test(out)) fail('the C++ runner did not report avx2 run and avx512 not run: not on the emulated CPU?');
  if (r.status !== 0 || Number(counts[2]) !== 0 || Number(counts[1]) === 0) fail('C++ tests failed');
}

// vitest, every Node process emulated: the main process (which loads node-llama-cpp in the global setup)
// through the wrapper, and every child started with process.execPath through test/haswell/exec-path.cjs.
function runVitest(tmp) {
  const wrapper = path.join(tmp, 'node');
  writeFileSync(wrapper, `#!/bin/sh\nexec ${QEMU} -cpu ${QEMU_CPU} ${JSON.stringify(process.execPath)} "$@"\n`);
  chmodSync(wrapper, 0o755);
  const preload = path.join(root, 'test', 'haswell', 'exec-path.cjs');
  const env = {
    ...process.env,
    TOKENMILL_QEMU_NODE: wrapper,
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --require ${preload}`.trim(),
    PATH: `${tmp}${path.delimiter}${process.env.PATH}`, // `node` by name is emulated too
  };
  const vitest = path.join(root, 'node_modules', 'vitest', 'vitest.mjs');
  const started = Date.now();
  const r = spawnSync(wrapper, [vitest, 'run', '--config', 'vitest.haswell.config.mts', ...process.argv.slice(2)], { cwd: root, env, stdio: 'inherit' });
  console.log(`test:cpu-haswell: vitest ${r.status === 0 ? 'passed' : 'FAILED'} (${((Date.now() - started) / 1000).toFixed(0)} s emulated)`);
  if (r.signal) fail(`vitest killed by ${r.signal}`);
  if (r.status !== 0) fail('vitest failed');
}

let tmp;
try {
  requireTools();
  tmp = mkdtempSync(path.join(os.tmpdir(), 'tokenmill-haswell-'));
  checkEmulator(tmp);
  runCppTests();
  runVitest(tmp);
  console.log('test:cpu-haswell: passed');
} catch (error) {
  if (!(error instanceof CheckFailed)) throw error;
  console.error(`test:cpu-haswell: ${error.message}`);
  process.exitCode = 1;
} finally {
  if (tmp) rmSync(tmp, { recursive: true, force: true });
}
