// Runs the C++ unit tests (built by `npm test` through `node-gyp configure --build_tests=1`): every test in
// one run on this machine's best kernels, then the kernel tests again with dispatch capped to AVX2 and to the
// baseline, so the fallbacks a prebuild meets on older CPUs are exercised here too.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

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

describe('C++ unit tests', () => {
  it('the test executable was built', () => {
    expect(existsSync(binary), `${binary} is missing: run npm run build:cpp-tests`).toBe(true);
  });

  it('all pass on this machine', () => {
    const { status, out } = run(null);
    expect(failures(out)).toEqual([]);
    expect(out).toMatch(/^\d+ passed, 0 failed$/m);
    expect(status).toBe(0);
  }, 300_000);

  for (const isa of ['avx2', 'baseline']) {
    it(`kernel and quant tests pass with dispatch capped to ${isa}`, () => {
      for (const filter of ['kernels', 'quant']) {
        const { status, out } = run(filter, isa);
        expect(failures(out)).toEqual([]);
        expect(status).toBe(0);
      }
    }, 300_000);
  }
});
