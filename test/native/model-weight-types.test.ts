// Weight types at model load: a file whose matrices are in a type the kernels do not compute with is
// refused with gguf_unsupported, naming the tensor, the type and the supported list — never a crash.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { buildSynthModel } from '../../bench/synth-model.js';
import { Model } from '../../lib/index.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'tokenmill-wtypes-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

test('matrices in IQ3_S (same block size as Q3_K, no kernel) are refused with an error naming the type', async () => {
  const { writer } = buildSynthModel({ arch: 'llama', type: 'Q3_K', nEmbd: 256, nLayer: 1, nHead: 4, nHeadKv: 4, nFf: 512, nCtx: 64, seed: 3 });
  // IQ3_S blocks are 110 bytes per 256 values like Q3_K's, so only the type id changes.
  const tensorTypeId: Record<string, number> = {};
  for (const t of writer.tensors) if (t.type === 'q3_k') tensorTypeId[t.name] = 21;
  const file = path.join(dir, 'iq3s.gguf');
  await writer.writeFile(file, { tensorTypeId });
  const err = await Model.load(file).then(() => null, (e: unknown) => e as Error & { code?: string });
  expect(err).not.toBeNull();
  expect(err!.code).toBe('gguf_unsupported');
  expect(err!.message).toMatch(/tensor 'token_embd\.weight' has type iq3_s, which tokenmill does not support/);
  expect(err!.message).toContain('q4_1, q5_0, q5_1');
  expect(err!.message).toContain('iq4_xs');
});
