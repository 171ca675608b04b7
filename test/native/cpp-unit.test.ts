// Runs the C++ unit tests (built by `npm test` through `node-gyp configure --build_tests=1`): every test in
// one run on this machine's best kernels, then the kernel tests again with dispatch capped to AVX2 and to the
// baseline (and, on a CPU with AMX, to AVX-512), so the fallbacks a prebuild meets on older CPUs are exercised
// here too.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { kernelLevel } from '../../lib/index.js';

const root = path.resolve(__dirname, '..', '..');
const binary = path.join(root, 'build', 'Release', 'tokenmill_cpp_tests');

function run(filter: string | null, isa?: string): { status: number | null; out: string } {
  const env = { ...process.env, ...(isa ? { TOKENMILL_ISA: isa } : {}) };
  const r = spawnSync(binary, filter ? [filter] : [], { cwd: root, env, encoding: 'utf8', timeout: 300_000 });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

function failures(out: string): string[] {
  return out.split('\n').filter((l) => l.startsWith('FAIL') || l.startsWith('    '));
}

// The runner's closing "N passed, M failed" line; a run without it (a crash) or with nothing run fails.
function counts(out: string): { passed: number; failed: number } {
  const m = /^(\d+) passed, (\d+) failed$/m.exec(out);
  if (!m) throw new Error(`the C++ test runner printed no "N passed, M failed" line:\n${out}`);
  return { passed: Number(m[1]), failed: Number(m[2]) };
}

describe('C++ unit tests', () => {
  it('the test executable was built', () => {
    expect(existsSync(binary), `${binary} is missing: run npm run build:cpp-tests`).toBe(true);
  });

  it('all pass on this machine', () => {
    const { status, out } = run(null);
    expect(failures(out)).toEqual([]);
    expect(counts(out).failed).toBe(0);
    expect(counts(out).passed).toBeGreaterThan(0);
    expect(status).toBe(0);
  }, 300_000);

  // On a CPU with AMX, also capped to avx512: the dispatch without the tiles must hold there too.
  const caps = kernelLevel() === 'avx512+amx' ? ['avx512', 'avx2', 'baseline'] : ['avx2', 'baseline'];
  for (const isa of caps) {
    it(`kernel and quant tests pass with dispatch capped to ${isa}`, () => {
      for (const filter of ['kernels', 'quant']) {
        const { status, out } = run(filter, isa);
        expect(failures(out)).toEqual([]);
        // a filter that matches nothing would pass by running nothing
        expect(counts(out).passed, `tests matching '${filter}' at ${isa}`).toBeGreaterThan(0);
        expect(counts(out).failed).toBe(0);
        expect(status).toBe(0);
      }
    }, 300_000);
  }
});
