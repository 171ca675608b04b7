// The fit check: the memory estimate from a model's header (weights, the KV cache the engine allocates,
// step buffers) against the memory limit, and Engine.create refusing a model that does not fit.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest';
import { writeSynthModel } from '../../bench/synth-model.js';
import { estimateMemory, memoryLimit } from '../../lib/engine/memory-estimate.js';
import { Engine, Model, kernelLevel } from '../../lib/index.js';

const dir = mkdtempSync(path.join(tmpdir(), 'tm-memory-'));
let model: Model;
beforeAll(async () => {
  const file = path.join(dir, 'm.gguf');
  await writeSynthModel(file, { arch: 'qwen2', type: 'Q8_0', nEmbd: 128, nHead: 4, nHeadKv: 2, nFf: 256, nLayer: 3, nCtx: 512, seed: 3 });
  model = await Model.load(file);
});
afterAll(() => {
  model.dispose();
  rmSync(dir, { recursive: true, force: true });
});
afterEach(() => {
  delete process.env.TOKENMILL_MEMORY_LIMIT;
});

// The two loads' logits for tokens, bit for bit.
async function expectSameLogits(a: Model, b: Model, tokens: number[]): Promise<void> {
  const x = await a.evaluate(tokens, { threads: 2 });
  const y = await b.evaluate(tokens, { threads: 2 });
  expect(Buffer.from(x.buffer, x.byteOffset, x.byteLength).equals(Buffer.from(y.buffer, y.byteOffset, y.byteLength))).toBe(true);
}

test('the estimate adds the tensor bytes, the KV blocks the engine allocates and its buffers', async () => {
  const kvBytesPerToken = 2 * 3 * 2 * 32 * 2;   // K and V × layers × kv heads × head dim × F16
  const e = estimateMemory(model.info, { kvCacheMemory: 100 * 16 * kvBytesPerToken + 5, maxNumSeqs: 4, maxModelLen: 512 });
  // A Q8_0 model's weights take the tensor bytes, mapped from the file or (avx512+amx) repacked at the same size.
  expect(model.info.weightBytes).toBe(model.info.tensors.reduce((s, t) => s + t.bytes, 0));
  expect(e.weights).toBe(model.info.weightBytes);
  expect(e.kvBytesPerToken).toBe(kvBytesPerToken);
  expect(e.kvTokens).toBe(1600);
  expect(e.kvCache).toBe(1600 * kvBytesPerToken);
  expect(e.kvFullContexts).toBe(4 * 512 * kvBytesPerToken);
  expect(e.total).toBe(e.weights + e.kvCache + e.buffers);
  // The engine allocates exactly the KV the estimate counts.
  const engine = await Engine.create(model, { kvCacheMemory: 100 * 16 * kvBytesPerToken + 5, maxNumSeqs: 4, threads: 1 });
  try {
    expect(engine.stats().kvBlocksTotal * 16).toBe(e.kvTokens);
  } finally {
    await engine.close();
  }
});

test('a model that does not fit the memory limit is refused with the numbers', async () => {
  const need = estimateMemory(model.info, { maxNumSeqs: 2 }).total;
  process.env.TOKENMILL_MEMORY_LIMIT = String(need - 1);
  expect(memoryLimit()).toEqual({ bytes: need - 1, source: 'TOKENMILL_MEMORY_LIMIT' });
  const err = await Engine.create(model, { maxNumSeqs: 2, threads: 1 }).then(() => null, (e: unknown) => e as Error & { code?: string });
  expect(err?.code).toBe('out_of_memory');
  expect(err?.message).toMatch(/needs about .* \(weights .* \+ KV cache 256 MiB for \d+ tokens \+ buffers .*\), more than the memory limit of .* \(TOKENMILL_MEMORY_LIMIT\)/);
  process.env.TOKENMILL_MEMORY_LIMIT = String(need);
  await (await Engine.create(model, { maxNumSeqs: 2, threads: 1 })).close();
});

test('the memory limit defaults to the cgroup limit or the RAM, and rejects a bad override', () => {
  const l = memoryLimit();
  expect(l.bytes).toBeGreaterThan(0);
  process.env.TOKENMILL_MEMORY_LIMIT = 'lots';
  expect(() => memoryLimit()).toThrow(/TOKENMILL_MEMORY_LIMIT must be a positive number of bytes, got 'lots'/);
});

test('tokenmill inspect prints the estimate and the limit, and says when the model does not fit', () => {
  const bin = path.resolve(__dirname, '..', '..', 'bin', 'tokenmill.cjs');
  const e = estimateMemory(model.info);
  const run = (limit?: number) => spawnSync(process.execPath, [bin, 'inspect', model.info.path], {
    encoding: 'utf8', env: { ...process.env, TOKENMILL_MEMORY_LIMIT: limit === undefined ? '' : String(limit) },
  });
  const fits = run();
  expect(fits.status).toBe(0);
  expect(fits.stdout).toMatch(/^memory +about .* \(weights .* \+ KV cache 256 MiB for \d+ tokens \+ buffers .*\) with the default engine options; KV 768 B per token .*; limit .*$/m);
  expect(fits.stdout).not.toContain('DOES NOT FIT');
  const tight = run(e.total - 1);
  expect(tight.stdout).toMatch(/limit .* \(TOKENMILL_MEMORY_LIMIT\) — DOES NOT FIT$/m);
});

// Q4_K matrices are copied into the repacked layout at load (docs/kernels.md, "Q4_K repacked at load") on the SIMD
// levels, the copy 4 bytes larger per 144; a model whose repacked weights would not fit the memory limit keeps the
// file's mapping instead. Both give the same logits, bit for bit, and weightBytes (what the estimate counts) says
// which happened.
test('Q4_K weights are repacked at load when they fit the memory limit, mapped when not, with the same logits', async () => {
  const file = path.join(dir, 'q4k.gguf');
  await writeSynthModel(file, { arch: 'llama', type: 'Q4_K', nEmbd: 256, nHead: 4, nHeadKv: 2, nFf: 512, nLayer: 2, nCtx: 256, seed: 5 });
  const repacked = await Model.load(file);
  const tensorBytes = repacked.info.tensors.reduce((s, t) => s + t.bytes, 0);
  process.env.TOKENMILL_MEMORY_LIMIT = String(tensorBytes);   // the file's weights fit; repacked, they would not
  const mapped = await Model.load(file);
  try {
    const q4k = repacked.info.tensors
      .filter((t) => t.type === 'q4_K' && t.name !== 'token_embd.weight' && t.shape[1]! % 16 === 0)
      .reduce((s, t) => s + t.bytes, 0);
    expect(q4k).toBeGreaterThan(0);
    expect(repacked.info.weightBytes).toBe(kernelLevel() === 'baseline' ? tensorBytes : tensorBytes + q4k / 36);
    expect(mapped.info.weightBytes).toBe(tensorBytes);
    await expectSameLogits(repacked, mapped, [1, 5, 9, 200, 17, 3, 44, 2]);
  } finally {
    repacked.dispose();
    mapped.dispose();
  }
});

// On avx512 and avx512+amx the Q4_1, Q4_0, IQ4_NL and Q5_0 matrices are copied 16 rows at a time into the layout the
// avx512 lanes read (docs/kernels.md, "Q4_1, Q4_0, IQ4_NL and Q5_0 repacked at load"; all but Q4_1's rows a whole
// number of 64-weight block pairs), at their file size, and on avx2 too (its transposed accumulators); the baseline
// keeps the file's rows. Repacked or mapped, the logits are the same bits: for decode, for 3 tokens (each
// group read once for all three) and for a batch that takes the prompt tile on panels decoded from the groups (on
// avx512+amx the tiles, on avx2 four tokens at a time).
test.each([
  ['Q4_1', 'q4_1', 7],
  ['Q4_0', 'q4_0', 8],
  ['IQ4_NL', 'iq4_nl', 9],
  ['Q5_0', 'q5_0', 10],
] as const)('%s weights are repacked for the SIMD levels at load, at the same size and with the same logits', async (type, name, seed) => {
  const file = path.join(dir, `${name}.gguf`);
  await writeSynthModel(file, { arch: 'llama', type, nEmbd: 256, nHead: 4, nHeadKv: 2, nFf: 512, nLayer: 2, nCtx: 256, seed });
  const repacked = await Model.load(file);
  const tensorBytes = repacked.info.tensors.reduce((s, t) => s + t.bytes, 0);
  process.env.TOKENMILL_MEMORY_LIMIT = String(tensorBytes - 1);   // nothing fits: the file's mapping stays
  const mapped = await Model.load(file);
  try {
    const fits = (t: { shape: number[] }) => t.shape[1]! % 16 === 0 && (type === 'Q4_1' || t.shape[0]! % 64 === 0);
    const layer = repacked.info.tensors
      .filter((t) => t.type === name && t.name !== 'token_embd.weight' && fits(t))
      .reduce((s, t) => s + t.bytes, 0);
    expect(layer).toBeGreaterThan(0);
    const repacks = kernelLevel() !== 'baseline';
    expect(repacked.info.repackedBytes).toBe(repacks ? layer : 0);
    expect(repacked.info.weightBytes).toBe(tensorBytes);
    expect(mapped.info.repackedBytes).toBe(0);
    for (const tokens of [[7], [3, 99, 12], Array.from({ length: 37 }, (_, i) => (i * 13 + 5) % 250)]) await expectSameLogits(repacked, mapped, tokens);
  } finally {
    repacked.dispose();
    mapped.dispose();
  }
});

// On avx512+amx and avx512 the Q8_0 matrices are copied into the 16-row layout at load (docs/kernels.md, "The AMX
// path", and "Q8_0 on avx512" under "Q4_1, Q4_0, IQ4_NL and Q5_0 repacked at load"), at their file size; the other
// levels keep the file's rows.
// Repacked or mapped, the logits are the same bits (the tiles, the lanes and the avx512 kernels of the rows compute
// one numeric): for decode (one token a block pair at a time), 3 and 16 tokens (the lanes) and 37 (the tiles, or
// the prompt tile on decoded panels).
test('Q8_0 weights are repacked at load on the AVX-512 levels, at the same size and with the same logits', async () => {
  const file = path.join(dir, 'q8.gguf');
  await writeSynthModel(file, { arch: 'llama', type: 'Q8_0', nEmbd: 256, nHead: 4, nHeadKv: 2, nFf: 512, nLayer: 2, nCtx: 256, seed: 6 });
  const repacked = await Model.load(file);
  const tensorBytes = repacked.info.tensors.reduce((s, t) => s + t.bytes, 0);
  process.env.TOKENMILL_MEMORY_LIMIT = String(tensorBytes - 1);   // nothing fits: the file's mapping stays
  const mapped = await Model.load(file);
  try {
    const q8 = repacked.info.tensors
      .filter((t) => t.type === 'q8_0' && t.name !== 'token_embd.weight' && t.shape[0]! % 64 === 0 && t.shape[1]! % 16 === 0)
      .reduce((s, t) => s + t.bytes, 0);
    expect(q8).toBeGreaterThan(0);
    expect(repacked.info.repackedBytes).toBe(kernelLevel().startsWith('avx512') ? q8 : 0);
    expect(repacked.info.weightBytes).toBe(tensorBytes);
    expect(mapped.info.repackedBytes).toBe(0);
    for (const n of [1, 3, 16, 37]) await expectSameLogits(repacked, mapped, Array.from({ length: n }, (_, i) => (i * 13 + 7) % 250));
  } finally {
    repacked.dispose();
    mapped.dispose();
  }
});
