// Seeded fuzzing of stories260K.gguf through Model.load: random byte flips in the header/metadata/
// tensor-info region, truncations, and huge u64 values at random offsets. Each load must resolve or
// reject with a tm error code; a crash would kill this forked worker and fail the file.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { Model } from '../../lib/index.js';
import { makeRng } from '../helpers/gguf-writer.js';
import { stories260K } from '../helpers/shared.js';

const dir = mkdtempSync(path.join(tmpdir(), 'tm-gguf-fuzz-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ITERATIONS = 2000;
const META_END = 14176;  // end of stories260K's tensor infos (the aligned data section starts here)
const HUGE = [(1n << 64n) - 1n, 1n << 63n, 1n << 60n, 1n << 40n, 1n << 32n, 0xffffffffn, 0n];
const CODES = new Set(['gguf_invalid', 'gguf_unsupported', 'io', 'tokenizer', 'invalid_argument']);

test(`${ITERATIONS} seeded mutations of stories260K load or reject cleanly`, async () => {
  const original = new Uint8Array(readFileSync(stories260K));
  const rng = makeRng(0x67677566);
  const pick = (n: number) => Math.floor(rng() * n);
  const file = path.join(dir, 'fuzz.gguf');
  let nOk = 0;
  let nRejected = 0;
  for (let iter = 0; iter < ITERATIONS; iter++) {
    let m = original.slice();
    const kind = pick(3);
    if (kind === 0) {
      const flips = 1 + pick(8);
      for (let k = 0; k < flips; k++) m[pick(META_END)] = pick(256);
    } else if (kind === 1) {
      m = m.subarray(0, pick(m.length));
    } else {
      new DataView(m.buffer).setBigUint64(pick(META_END - 8), HUGE[pick(HUGE.length)]!, true);
    }
    writeFileSync(file, m);
    try {
      const model = await Model.load(file);
      model.dispose();
      nOk++;
    } catch (e) {
      const err = e as Error & { code?: unknown };
      expect(CODES.has(String(err.code)), `iteration ${iter}: code ${String(err.code)}: ${err.message}`).toBe(true);
      expect(err.message).toContain(file);
      nRejected++;
    }
  }
  expect(nOk + nRejected).toBe(ITERATIONS);
  expect(nRejected).toBeGreaterThan(ITERATIONS / 4);
}, 120_000);  // a load that hangs fails here (about 4 s on an idle 2-core machine)
