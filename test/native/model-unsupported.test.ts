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
  writer.set('general.architecture', gv.string('phi3'));
  const file = path.join(dir, 'phi3.gguf');
  await writer.writeFile(file);
  const err = await loadError(file);
  expect(err.code).toBe('gguf_unsupported');
  expect(err.message).toContain("unsupported architecture 'phi3' (supported: llama, qwen2, qwen3, gemma2, gemma3)");
});

test('Llama 3 rope frequency factors (rope_freqs.weight) are refused by name, not ignored', async () => {
  const { writer } = buildSynthModel({ arch: 'llama', ...shape });
  writer.addTensor('rope_freqs.weight', 'f32', [16], new Uint8Array(64));
  const file = path.join(dir, 'rope-freqs.gguf');
  await writer.writeFile(file);
  const err = await loadError(file);
  expect(err.code).toBe('gguf_unsupported');
  expect(err.message).toContain("tensor 'rope_freqs.weight' (Llama 3 rope frequency factors) is not supported yet");
});
