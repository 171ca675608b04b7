// A model tokenmill cannot run is refused at load with an error that names what is missing — never a
// crash, never a model that loads and writes nonsense.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { buildSynthModel } from '../../bench/synth-model.js';
import { Model } from '../../lib/index.js';
import { gv } from '../helpers/gguf-writer.js';

const dir = mkdtempSync(path.join(tmpdir(), 'tm-unsupported-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const shape = { type: 'F16', nEmbd: 64, nHead: 2, nHeadKv: 2, nFf: 128, nLayer: 1, nCtx: 64, seed: 1 } as const;

async function loadError(file: string): Promise<Error & { code?: string }> {
  try {
    (await Model.load(file)).dispose();
  } catch (e) {
    return e as Error & { code?: string };
  }
  throw new Error(`${file} loaded`);
}

test('an architecture tokenmill does not run names itself and the supported ones', async () => {
  const { writer } = buildSynthModel({ arch: 'llama', ...shape });
  writer.set('general.architecture', gv.string('falcon'));
  const file = path.join(dir, 'falcon.gguf');
  await writer.writeFile(file);
  const err = await loadError(file);
  expect(err.code).toBe('gguf_unsupported');
  expect(err.message).toContain("unsupported architecture 'falcon' (supported: llama, qwen2, qwen3, gemma2, gemma3, phi3)");
});

test('rope frequency factors (rope_freqs.weight): refused on an architecture llama.cpp does not apply them to; checked on llama', async () => {
  const factors = (values: number[]) => new Uint8Array(Float32Array.from(values).buffer);
  const qwen = buildSynthModel({ arch: 'qwen2', ...shape });
  qwen.writer.addTensor('rope_freqs.weight', 'f32', [16], factors(new Array<number>(16).fill(1)));
  const qwenFile = path.join(dir, 'qwen2-rope-freqs.gguf');
  await qwen.writer.writeFile(qwenFile);
  const refused = await loadError(qwenFile);
  expect(refused.code).toBe('gguf_unsupported');
  expect(refused.message).toContain("tensor 'rope_freqs.weight' (rope frequency factors) is supported for llama models only, not qwen2");

  // head dim 32: 16 pairs. A zero factor would divide every angle of its pair by zero.
  const zero = buildSynthModel({ arch: 'llama', ...shape });
  zero.writer.addTensor('rope_freqs.weight', 'f32', [16], factors([...new Array<number>(15).fill(1), 0]));
  const zeroFile = path.join(dir, 'rope-freqs-zero.gguf');
  await zero.writer.writeFile(zeroFile);
  const bad = await loadError(zeroFile);
  expect(bad.code).toBe('gguf_invalid');
  expect(bad.message).toContain("tensor 'rope_freqs.weight' has factor 0.000000 at 15; rope frequency factors must be positive and finite");

  const short = buildSynthModel({ arch: 'llama', ...shape });
  short.writer.addTensor('rope_freqs.weight', 'f32', [8], factors(new Array<number>(8).fill(1)));
  const shortFile = path.join(dir, 'rope-freqs-short.gguf');
  await short.writer.writeFile(shortFile);
  const wrong = await loadError(shortFile);
  expect(wrong.code).toBe('gguf_invalid');
  expect(wrong.message).toContain("tensor 'rope_freqs.weight' has shape [8], expected [16]");
});

test('phi3 with longrope factors (rope_factors_long/short, the 128k models) is refused by name', async () => {
  const { writer } = buildSynthModel({ arch: 'phi3', ...shape });
  writer.addTensor('rope_factors_long.weight', 'f32', [16], new Uint8Array(Float32Array.from(new Array<number>(16).fill(1)).buffer));
  const file = path.join(dir, 'phi3-longrope.gguf');
  await writer.writeFile(file);
  const err = await loadError(file);
  expect(err.code).toBe('gguf_unsupported');
  expect(err.message).toContain("tensor 'rope_factors_long.weight' (phi3 longrope scaling) is not supported");
});
