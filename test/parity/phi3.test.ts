// phi3 on synthetic models vs llama.cpp (node-llama-cpp, flash attention, 1 thread): logits at every position.
// phi3 is the llama block with fused tensors — attn_qkv holds the Q, K and V rows, ffn_up the gate rows then
// the up rows — NeoX rope, and queries pre-scaled by 1/sqrt(head_dim) after rope (attention scale 1), which
// is llama.cpp's order. GQA (4 query heads, 2 KV heads) so the fused tensor's three parts differ in size.
// Phi-3's own vocabulary (llama.cpp's phi3 loader looks up its special tokens, which the built-in one lacks).
// Tolerances as in gemma.test.ts, loose enough for any llama.cpp CPU build.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { writeSynthModel, type SynthType } from '../../bench/synth-model.js';
import { Model } from '../../lib/index.js';
import { perPositionDiff } from '../helpers/logit-diff.js';
import { peerLoadModel, peerLogits } from '../helpers/peer.js';
import { vocabDir } from '../helpers/shared.js';

const PROMPT = 'Once upon a time there was a little girl named Lily. She was happy because the sun was warm and her dog Max ran with her.';
const N_POS = 24;

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'tokenmill-phi3-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('phi3 (synthetic) logits vs llama.cpp', () => {
  const cases: { type: SynthType; tol: number }[] = [
    { type: 'F16', tol: 0.05 },
    { type: 'Q8_0', tol: 0.5 },
    { type: 'Q4_K', tol: 0.5 },
  ];
  for (const c of cases) {
    test(`${c.type}: every position`, async () => {
      const kQuant = c.type.endsWith('_K');
      const file = path.join(dir, `phi3-${c.type}.gguf`);
      const info = await writeSynthModel(file, {
        arch: 'phi3', type: c.type, nEmbd: kQuant ? 256 : 128, nHead: 4, nHeadKv: 2, nFf: kQuant ? 512 : 256,
        nLayer: 2, nCtx: 256, seed: 51 + c.type.length, vocab: path.join(vocabDir, 'ggml-vocab-phi-3.gguf'),
      });
      const model = await Model.load(file);
      const peer = await peerLoadModel(file);
      try {
        expect(model.info.architecture).toBe('phi3');
        const tokens = model.tokenize(PROMPT).slice(0, N_POS);
        expect(tokens.length).toBe(N_POS);
        const ours = await model.evaluate(tokens, { threads: 1 });
        const theirs = await peerLogits(peer, tokens, info.nVocab);
        const diff = perPositionDiff(ours, theirs, N_POS, info.nVocab);
        console.log(`phi3 ${c.type}: per-position max |Δlogit| ${diff.map((d) => d.toExponential(1)).join(' ')}`);
        expect(Math.max(...diff)).toBeLessThanOrEqual(c.tol);
      } finally {
        await peer.dispose();
        model.dispose();
      }
    }, 120_000);
  }
});
