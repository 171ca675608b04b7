// Llama 3 rope frequency factors (rope_freqs.weight: one divisor per rotated pair, the Llama 3.1 scheme as
// convert_hf_to_gguf.py writes it) on synthetic llama models vs llama.cpp (node-llama-cpp, flash attention,
// 1 thread): logits at every position. The factors follow Llama 3's formula with a small original context
// (32), so that at these short positions pairs get factor 1, factor 8 and the smoothed values between.
// The same weights without the tensor must move the logits far more than the tolerance, so a loader that
// ignored the factors could not pass. Tolerances as in gemma.test.ts, loose enough for any llama.cpp CPU build;
// measured against zen4 (tokenmill avx512): F16 within 9.5e-7 and Q8_0 exactly 0 at all 24 positions, while
// the same weights without the factors differ by up to 2.3 (F16) and 5.1 (Q8_0).
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildSynthModel, type SynthType } from '../../bench/synth-model.js';
import { Model } from '../../lib/index.js';
import { perPositionDiff } from '../helpers/logit-diff.js';
import { peerLoadModel, peerLogits } from '../helpers/peer.js';

const PROMPT = 'Once upon a time there was a little girl named Lily. She was happy because the sun was warm and her dog Max ran with her.';
const N_POS = 24;
const BASE = 10000;

/** convert_hf_to_gguf.py's Llama 3 factors for rope pairs of `nRot` dims. */
function llama3Factors(nRot: number, factor: number, low: number, high: number, origCtx: number): Float32Array {
  const out = new Float32Array(nRot / 2);
  for (let i = 0; i < nRot / 2; i++) {
    const freq = 1 / BASE ** ((2 * i) / nRot);
    const wavelen = (2 * Math.PI) / freq;
    if (wavelen < origCtx / high) out[i] = 1;
    else if (wavelen > origCtx / low) out[i] = factor;
    else {
      const smooth = (origCtx / wavelen - low) / (high - low);
      out[i] = 1 / ((1 - smooth) / factor + smooth);
    }
  }
  return out;
}

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'tokenmill-rope-freqs-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('llama with rope_freqs.weight (synthetic) logits vs llama.cpp', () => {
  const cases: { type: SynthType; tol: number }[] = [
    { type: 'F16', tol: 0.05 },
    { type: 'Q8_0', tol: 0.5 },
  ];
  for (const c of cases) {
    test(`${c.type}: every position`, async () => {
      const synth = buildSynthModel({ arch: 'llama', type: c.type, nEmbd: 128, nHead: 4, nHeadKv: 2, nFf: 256, nLayer: 2, nCtx: 256, seed: 41 + c.type.length, ropeFreqBase: BASE });
      const plain = path.join(dir, `llama-${c.type}-plain.gguf`);
      await synth.writer.writeFile(plain);
      const factors = llama3Factors(synth.headDim, 8, 1, 4, 32);
      expect(new Set(factors).size).toBeGreaterThan(2); // 1, 8 and smoothed values between
      synth.writer.addTensor('rope_freqs.weight', 'f32', [factors.length], new Uint8Array(factors.buffer));
      const file = path.join(dir, `llama-${c.type}-rope-freqs.gguf`);
      await synth.writer.writeFile(file);

      const model = await Model.load(file);
      const without = await Model.load(plain);
      const peer = await peerLoadModel(file);
      try {
        const tokens = model.tokenize(PROMPT).slice(0, N_POS);
        expect(tokens.length).toBe(N_POS);
        const ours = await model.evaluate(tokens, { threads: 1 });
        const theirs = await peerLogits(peer, tokens, synth.nVocab);
        const diff = perPositionDiff(ours, theirs, N_POS, synth.nVocab);
        const ignored = perPositionDiff(await without.evaluate(tokens, { threads: 1 }), theirs, N_POS, synth.nVocab);
        console.log(`rope_freqs ${c.type}: per-position max |Δlogit| ${diff.map((d) => d.toExponential(1)).join(' ')}; ` +
          `without the factors up to ${Math.max(...ignored).toExponential(1)}`);
        expect(Math.max(...diff)).toBeLessThanOrEqual(c.tol);
        expect(Math.max(...ignored)).toBeGreaterThan(4 * c.tol);
      } finally {
        await peer.dispose();
        model.dispose();
        without.dispose();
      }
    }, 120_000);
  }
});
