// Machine facts the benchmark reports: the kernel level, the read bandwidth, and the tensor sizes that the
// decode bandwidth limit is computed from.
import { statSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { Model, kernelLevel, measureReadBandwidth } from '../../lib/index.js';
import { stories260K } from '../helpers/shared.js';

describe('platform facts', () => {
  test('kernelLevel names the dispatch level, capped by TOKENMILL_ISA', () => {
    expect(['baseline', 'avx2', 'avx512', 'avx512+amx']).toContain(kernelLevel());
    if (process.env.TOKENMILL_ISA === 'baseline') expect(kernelLevel()).toBe('baseline');
    if (process.env.TOKENMILL_ISA === 'avx512') expect(kernelLevel()).not.toBe('avx512+amx');
  });

  test('measureReadBandwidth returns a plausible rate without blocking the event loop', async () => {
    let ticks = 0;
    const timer = setInterval(() => { ticks++; }, 1);
    const rate = await measureReadBandwidth({ bytes: 64 << 20, threads: 1, reps: 3 });
    clearInterval(timer);
    // Anything from a slow VM (~0.5 GB/s) to a large server (~500 GB/s); a broken timer or sum would fall outside.
    expect(rate).toBeGreaterThan(5e8);
    expect(rate).toBeLessThan(5e11);
    expect(ticks).toBeGreaterThan(0);
  });

  test('measureReadBandwidth rejects bad arguments with invalid_argument', async () => {
    await expect(measureReadBandwidth({ bytes: 1000 })).rejects.toMatchObject({ code: 'invalid_argument' });
    await expect(measureReadBandwidth({ threads: 0 })).rejects.toMatchObject({ code: 'invalid_argument' });
    await expect(measureReadBandwidth({ reps: 1.5 })).rejects.toMatchObject({ code: 'invalid_argument' });
  });

  test('model.measureWeightReadBandwidth reads the decode read set of the model', async () => {
    const model = await Model.load(stories260K);
    try {
      const r = await model.measureWeightReadBandwidth({ threads: 2, reps: 3 });
      // The decode read set: every tensor except the token embeddings (this model has its own output matrix),
      // each counted once — the same bytes the tensor list gives, read in whole 8-byte words.
      const tensors = model.info.tensors;
      expect(tensors.some((t) => t.name === 'output.weight')).toBe(true);
      const expected = tensors.reduce((sum, t) => sum + (t.name === 'token_embd.weight' ? 0 : t.bytes), 0);
      expect(r.bytes).toBeLessThanOrEqual(expected);
      expect(r.bytes).toBeGreaterThan(expected - 16 * tensors.length);
      expect(r.bytesPerSecond).toBeGreaterThan(5e8);
      expect(r.bytesPerSecond).toBeLessThan(5e12);
    } finally {
      model.dispose();
    }
  });

  test('model.measureWeightReadBandwidth refuses bad arguments, vocab-only and disposed models', async () => {
    const model = await Model.load(stories260K);
    await expect(model.measureWeightReadBandwidth({ threads: 0 })).rejects.toMatchObject({ code: 'invalid_argument' });
    await expect(model.measureWeightReadBandwidth({ reps: 1.5 })).rejects.toMatchObject({ code: 'invalid_argument' });
    model.dispose();
    await expect(model.measureWeightReadBandwidth()).rejects.toMatchObject({ code: 'disposed' });
    const vocab = await Model.load(stories260K, { vocabOnly: true });
    try {
      await expect(vocab.measureWeightReadBandwidth()).rejects.toMatchObject({ code: 'invalid_argument' });
    } finally {
      vocab.dispose();
    }
  });

  test("model.info.tensors[].bytes add up to the file's data section", async () => {
    const model = await Model.load(stories260K);
    try {
      const total = model.info.tensors.reduce((sum, t) => sum + t.bytes, 0);
      expect(total).toBeGreaterThan(0);
      // Data follows the header and metadata; tensors are aligned (32 bytes by default), so the sum may be a few bytes short per tensor.
      const file = statSync(stories260K).size;
      expect(total).toBeLessThan(file);
      expect(file - total).toBeLessThan(file * 0.5);
      const f32 = model.info.tensors.find((t) => t.type === 'f32')!;
      expect(f32.bytes).toBe(4 * f32.shape.reduce((a, b) => a * b, 1));
    } finally {
      model.dispose();
    }
  });
});
