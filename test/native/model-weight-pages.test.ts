// The weights repacked at load live in one allocation advised for transparent huge pages (NOTE(huge-pages) in
// native/model/repack.cpp): a decode step streams them with fewer page translations. /proc/self/smaps lists the
// advice as the mapping's `hg` flag (VM_HUGEPAGE), set by madvise(MADV_HUGEPAGE) in every THP mode, whether or not
// huge pages were free at the time. A kernel built without THP has no /sys/kernel/mm/transparent_hugepage and
// refuses the advice (madvise fails with EINVAL); there the test checks that the copy is made all the same and
// carries no advice — what such a system gets — instead of skipping.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { writeSynthModel } from '../../bench/synth-model.js';
import { Model, kernelLevel } from '../../lib/index.js';

const dir = mkdtempSync(path.join(tmpdir(), 'tm-pages-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const thp = existsSync('/sys/kernel/mm/transparent_hugepage');
const hugePageBytes = 2n * 1024n * 1024n;

// The process's mappings advised for transparent huge pages: [start, end) in bytes.
function advisedMappings(): Array<{ start: bigint; end: bigint }> {
  const out: Array<{ start: bigint; end: bigint }> = [];
  let current: { start: bigint; end: bigint } | null = null;
  for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    const range = /^([0-9a-f]+)-([0-9a-f]+) /.exec(line);
    if (range) current = { start: BigInt(`0x${range[1]}`), end: BigInt(`0x${range[2]}`) };
    else if (current && /^VmFlags:.* hg( |$)/.test(line)) out.push(current);
  }
  return out;
}

test(
  thp
    ? 'repacked weights are advised for transparent huge pages'
    : 'repacked weights are copied without the huge-page advice this kernel (no transparent huge pages) refuses',
  async () => {
    const file = path.join(dir, 'q4_1.gguf');
    await writeSynthModel(file, { arch: 'llama', type: 'Q4_1', nEmbd: 256, nHead: 4, nHeadKv: 2, nFf: 512, nLayer: 2, nCtx: 256, seed: 11 });
    const key = (m: { start: bigint; end: bigint }) => `${m.start}-${m.end}`;
    const before = new Set(advisedMappings().map(key));
    const model = await Model.load(file);
    try {
      const added = advisedMappings().filter((m) => !before.has(key(m)));
      if (kernelLevel() === 'baseline') {
        // The baseline keeps the file's rows: no copy, no advice.
        expect(model.info.repackedBytes).toBe(0);
        expect(added).toEqual([]);
        return;
      }
      const size = BigInt(model.info.repackedBytes);
      expect(size).toBeGreaterThan(0n);
      if (!thp) {
        expect(added).toEqual([]);
        return;
      }
      // One advised mapping: the copy, on a huge-page boundary, its length rounded up to whole huge pages.
      expect(added).toEqual([{ start: added[0]!.start, end: added[0]!.start + (size + hugePageBytes - 1n) / hugePageBytes * hugePageBytes }]);
      expect(added[0]!.start % hugePageBytes).toBe(0n);
    } finally {
      model.dispose();
    }
    // Disposing the model unmaps the copy.
    expect(advisedMappings().filter((m) => !before.has(key(m)))).toEqual([]);
  },
);
