// Attention cut between single query heads must not change a bit. With fewer (token, KV head) pairs than two
// per thread, the forward pass splits a KV head's group of query heads between tasks (NOTE(attention-split)):
// a one-token decode of SmolLM2-135M (9 heads on 3 KV heads) on 2 threads, or of Gemma 3 (one KV head). Here
// the same tokens run with 1 thread (whole groups, one task) and with more threads than pairs / 2, so the
// tasks' head ranges start and end inside groups, and every logit must be the same.
// - llama with 9 heads on 3 KV heads, head dim 64: the AVX-512 and AVX2 kernels' register-blocked path
//   (head dim 4 or 8 vectors); gemma3 with 4 heads on 1 KV head, head dim 96, a sliding window of 4 keys on
//   five of its six layers: the kernels' general path and the window's slot table, kept per task.
// - The prompt runs in one batch (evaluate), so with n tokens and t threads the cut is by head while
//   n * n_kv_head < 2 * t: each case's thread counts are chosen for that, and each prefix of a few tokens
//   (its own batch) equals its row of the one-thread whole.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { writeSynthModel, type SynthModelOptions } from '../../bench/synth-model.js';
import { Model } from '../../lib/index.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'tokenmill-attn-split-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

interface SplitCase {
  name: string;
  model: SynthModelOptions;
  tokens: number;     // the whole prompt's length
  threads: number[];  // thread counts above tokens * nHeadKv / 2: every one cuts by head
}

const cases: SplitCase[] = [
  {
    name: 'llama, 9 heads on 3 KV heads',
    model: { arch: 'llama', type: 'F16', nEmbd: 576, nHead: 9, nHeadKv: 3, headDim: 64, nFf: 256, nLayer: 2, nCtx: 64, seed: 5 },
    tokens: 3,
    threads: [5, 7, 8],
  },
  {
    name: 'gemma3, 4 heads on 1 KV head, sliding window 4',
    model: {
      arch: 'gemma3', type: 'F16', nEmbd: 256, nHead: 4, nHeadKv: 1, headDim: 96, nFf: 256, nLayer: 6, nCtx: 64,
      slidingWindow: 4, seed: 9,
    },
    tokens: 9,
    threads: [5, 6, 7],
  },
];

describe('attention split between single query heads', () => {
  for (const c of cases) {
    test(`${c.name}: every thread count and every prefix gives the one-thread logits`, async () => {
      for (const t of c.threads) expect(c.tokens * c.model.nHeadKv).toBeLessThan(2 * t);
      const file = path.join(dir, `${c.model.arch}.gguf`);
      const info = await writeSynthModel(file, c.model);
      const model = await Model.load(file);
      try {
        const tokens = Array.from({ length: c.tokens }, (_, i) => 3 + ((i * 37) % (info.nVocab - 3)));
        const v = info.nVocab;
        const whole = await model.evaluate(tokens, { threads: 1 });
        expect(whole.length).toBe(c.tokens * v);
        for (const t of c.threads) {
          expect(await model.evaluate(tokens, { threads: t }), `${t} threads`).toEqual(whole);
          for (let k = 1; k < c.tokens; k++) {
            const part = await model.evaluate(tokens.slice(0, k), { threads: t });
            expect(part.subarray((k - 1) * v, k * v), `${t} threads, prefix ${k}`).toEqual(whole.subarray((k - 1) * v, k * v));
          }
        }
      } finally {
        model.dispose();
      }
    });
  }
});
