// A prebuild must run on any x86-64 with AVX2. Kernels for wider ISAs live in their own static libraries
// and are chosen at run time, so AVX instructions may appear only in functions of those libraries: if an
// inline function or template instantiated in an AVX-512 object were picked by the linker for baseline
// callers, an AVX2-only CPU would crash. This disassembles the addon and checks where each register class is
// used.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const addon = path.resolve(__dirname, '..', '..', 'build', 'Release', 'tokenmill.node');

function functionsUsing(disassembly: string, register: RegExp): Set<string> {
  const found = new Set<string>();
  let current = '';
  for (const line of disassembly.split('\n')) {
    const header = /^[0-9a-f]+ <(.+)>:$/.exec(line);
    if (header) current = header[1]!;
    else if (register.test(line)) found.add(current);
  }
  return found;
}

describe('ISA isolation of the addon', () => {
  const dump = spawnSync('objdump', ['-d', '-C', '--no-show-raw-insn', addon], { encoding: 'utf8', maxBuffer: 1 << 30 });

  it('disassembles', () => {
    expect(dump.status).toBe(0);
  });

  // The AMX kernels (namespace tmill::kernels::amx) fold their tiles with AVX-512 and are chosen only with it.
  const amxKernel = (f: string): boolean => f.includes('tmill::kernels::amx::');

  it('uses 512-bit registers only in avx512 and amx kernels', () => {
    const users = [...functionsUsing(dump.stdout, /%zmm|%k[1-7]\b/)];
    expect(users.length).toBeGreaterThan(0); // the AVX-512 kernels are there and were seen
    expect(users.filter((f) => !f.includes('avx512') && !amxKernel(f))).toEqual([]);
  });

  it('uses tile registers only in amx kernels', () => {
    const users = [...functionsUsing(dump.stdout, /%tmm[0-7]\b|ldtilecfg|tilerelease/)];
    expect(users.length).toBeGreaterThan(0); // the AMX kernels are there and were seen
    expect(users.filter((f) => !amxKernel(f))).toEqual([]);
  });

  // AVX512-BF16 is not part of the avx512 level: only the BF16 pair-dot kernels, which kernels_for picks where the CPU
  // has the extension (NOTE(bf16-dot)), may issue its instructions.
  it('uses AVX512-BF16 instructions only in the BF16 pair-dot kernels', () => {
    const users = [...functionsUsing(dump.stdout, /\b(vdpbf16ps|vcvtne2ps2bf16|vcvtneps2bf16)\b/)];
    expect(users.length).toBeGreaterThan(0); // the pair-dot kernels are there and were seen
    expect(users.filter((f) => !f.includes('avx512::') || !f.includes('bf16_dot'))).toEqual([]);
  });

  it('uses 256-bit registers only in avx2 or avx512 kernels', () => {
    const users = [...functionsUsing(dump.stdout, /%ymm/)];
    expect(users.some((f) => f.includes('avx2'))).toBe(true);
    expect(users.filter((f) => !f.includes('avx2') && !f.includes('avx512') && !amxKernel(f))).toEqual([]);
  });
});
