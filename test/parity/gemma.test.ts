// Gemma architectures on synthetic models vs llama.cpp (node-llama-cpp, flash attention, 1 thread): logits
// at every position. gemma3 with 6 layers (five sliding-window layers, one global; llama.cpp's pattern) and
// a window of 4 keys, so a 12-token prompt runs well past the window on the local layers; the local layers
// rope with base 10000, the global one with the file's. gemma2 (every other layer sliding, attention scores
// soft-capped at 50 and logits at 30, no q/k norms) likewise, with the soft caps lowered to 5 and 3 so they
// bite on these small random models.
//
// Tolerances as in logits.test.ts: quantized activations can flip one rounding and move a position by ~0.2;
// F16 rows sit within ~5e-3 of llama.cpp's from the first attending position, as qwen3's do on the same
// shapes (measured: gemma3 F16 4.7e-3, qwen3 F16 4.5e-3, Q8_0 exactly 0 at every position, Q4_K 0.19).
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildSynthModel, writeSynthModel, type SynthType } from '../../bench/synth-model.js';
import { Model } from '../../lib/index.js';
import { gv } from '../helpers/gguf-writer.js';
import { peerLoadModel, peerLogits } from '../helpers/peer.js';
import { perPositionDiff } from '../helpers/logit-diff.js';

const PROMPT = 'Once upon a time there was a little girl named Lily. She was happy and she liked to play outside';
const N_POS = 12;

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'tokenmill-gemma-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('gemma3 (synthetic) logits vs llama.cpp', () => {
  const cases: { type: SynthType; tol: number; tied: boolean }[] = [
    { type: 'F16', tol: 0.05, tied: true },
    { type: 'Q8_0', tol: 0.5, tied: false },
    { type: 'Q4_K', tol: 0.5, tied: true },
  ];
  for (const c of cases) {
    test(`${c.type}${c.tied ? ' tied' : ''}: every position`, async () => {
      const kQuant = c.type.endsWith('_K');
      const file = path.join(dir, `gemma3-${c.type}.gguf`);
      // gemma's head dim differs from n_embd / n_head (key_length), as in the real 270M (640 / 4 vs 256).
      const info = await writeSynthModel(file, {
        arch: 'gemma3', type: c.type, nEmbd: 256, nHead: 4, nHeadKv: 1, headDim: kQuant ? 128 : 96, nFf: 512,
        nLayer: 6, nCtx: 256, slidingWindow: 4, seed: 31 + c.type.length, tiedOutput: c.tied,
      });
      const model = await Model.load(file);
      const peer = await peerLoadModel(file);
      try {
        const tokens = model.tokenize(PROMPT).slice(0, N_POS);
        expect(tokens.length).toBe(N_POS);
        const ours = await model.evaluate(tokens, { threads: 1 });
        const theirs = await peerLogits(peer, tokens, info.nVocab);
        const diff = perPositionDiff(ours, theirs, N_POS, info.nVocab);
        console.log(`gemma3 ${c.type}: per-position max |Δlogit| ${diff.map((d) => d.toExponential(1)).join(' ')}`);
        expect(Math.max(...diff)).toBeLessThanOrEqual(c.tol);
      } finally {
        await peer.dispose();
        model.dispose();
      }
    });
  }
});

describe('gemma2 (synthetic) logits vs llama.cpp', () => {
  for (const c of [{ type: 'Q8_0' as const, tol: 0.5 }, { type: 'F16' as const, tol: 0.05 }]) {
    test(`${c.type}: every position, soft-capped attention and logits`, async () => {
      const file = path.join(dir, `gemma2-${c.type}.gguf`);
      const { writer, nVocab } = buildSynthModel({
        arch: 'gemma2', type: c.type, nEmbd: 256, nHead: 4, nHeadKv: 2, nFf: 512, nLayer: 4, nCtx: 256,
        slidingWindow: 4, seed: 77, tiedOutput: true,
      });
      writer.set('gemma2.attn_logit_softcapping', gv.f32(5));
      writer.set('gemma2.final_logit_softcapping', gv.f32(3));
      await writer.writeFile(file);
      const model = await Model.load(file);
      const peer = await peerLoadModel(file);
      try {
        const tokens = model.tokenize(PROMPT).slice(0, N_POS);
        const ours = await model.evaluate(tokens, { threads: 1 });
        const theirs = await peerLogits(peer, tokens, nVocab);
        const diff = perPositionDiff(ours, theirs, N_POS, nVocab);
        console.log(`gemma2 ${c.type}: per-position max |Δlogit| ${diff.map((d) => d.toExponential(1)).join(' ')}`);
        // Logits are capped to ±3: a model that ignored the cap would be far off.
        expect(Math.max(...Array.from(ours, Math.abs))).toBeLessThanOrEqual(3);
        expect(Math.max(...diff)).toBeLessThanOrEqual(c.tol);
      } finally {
        await peer.dispose();
        model.dispose();
      }
    });
  }
});
