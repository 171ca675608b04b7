// Logprobs of sampled tokens and of the prompt, checked against the model's raw logits (evaluate()).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine, type GenerateEvent, Model } from '../../lib/index.js';
import { collect } from '../helpers/engine-run.js';
import { stories260K } from '../helpers/shared.js';

let model: Model;
let engine: Engine;
const V = 512;

beforeAll(async () => {
  model = await Model.load(stories260K);
  engine = await Engine.create(model, { kvCacheMemory: 4 << 20, threads: 1 });
});

afterAll(async () => {
  await engine.close();
});

function logSoftmax(row: Float32Array): Float64Array {
  let max = -Infinity;
  for (const v of row) max = Math.max(max, v);
  let sum = 0;
  for (const v of row) sum += Math.exp(v - max);
  const lse = max + Math.log(sum);
  return Float64Array.from(row, (v) => v - lse);
}

async function run(request: Parameters<Engine['generate']>[0]): Promise<GenerateEvent[]> {
  const events: GenerateEvent[] = [];
  for await (const ev of engine.generate(request)) events.push(ev);
  return events;
}


describe('logprobs', () => {
  const promptTokens = [1, 403, 407, 261, 378, 300, 400, 270, 290, 350, 303, 411, 420, 287, 265, 402, 345, 299, 288, 300];

  it('prompt logprobs: one entry per prompt token after the first, equal to the log-softmax of the raw logits', async () => {
    const logits = await model.evaluate(promptTokens);
    const events = await run({ promptTokens, maxTokens: 2, temperature: 0, promptLogprobs: 3 });
    const pl = events.find((e) => e.promptLogprobs)?.promptLogprobs;
    expect(pl).toBeDefined();
    expect(pl!.length).toBe(promptTokens.length - 1);
    for (let p = 0; p < promptTokens.length - 1; p++) {
      const ls = logSoftmax(logits.subarray(p * V, (p + 1) * V));
      const entry = pl![p]!;
      expect(entry.token).toBe(promptTokens[p + 1]);
      expect(entry.logprob).toBeCloseTo(ls[entry.token]!, 4);
      expect(entry.top.map((t) => t.rank)).toEqual([1, 2, 3]);
      const best = [...ls.keys()].sort((a, b) => ls[b]! - ls[a]!).slice(0, 3);
      expect(entry.top.map((t) => t.token)).toEqual(best);
      expect(entry.rank).toBe([...ls].filter((v) => v >= ls[entry.token]!).length);
    }
  });

  it('prompt logprobs when the prompt has more rows than maxNumSeqs (output rows sized by the batch, not the sequences)', async () => {
    const logits = await model.evaluate(promptTokens);
    for (const options of [{ maxNumSeqs: 2 }, { maxNumSeqs: 4, maxNumBatchedTokens: 8 }]) {
      const small = await Engine.create(model, { kvCacheMemory: 4 << 20, threads: 1, ...options });
      try {
        const runs = await Promise.all(
          [0, 1, 2].map(async () => {
            const { events } = await collect(small, { promptTokens, maxTokens: 2, temperature: 0, promptLogprobs: 2 });
            return events.find((e) => e.promptLogprobs)!.promptLogprobs!;
          }),
        );
        for (const pl of runs) {
          expect(pl.length).toBe(promptTokens.length - 1);
          for (let p = 0; p < promptTokens.length - 1; p++) {
            const ls = logSoftmax(logits.subarray(p * V, (p + 1) * V));
            expect(pl[p]!.token).toBe(promptTokens[p + 1]);
            expect(pl[p]!.logprob).toBeCloseTo(ls[pl[p]!.token]!, 4);
          }
        }
      } finally {
        await small.close();
      }
    }
  });

  it('prompt logprobs are complete even when the prompt is in the prefix cache (no hit is used)', async () => {
    await run({ promptTokens, maxTokens: 1, temperature: 0 });
    const events = await run({ promptTokens, maxTokens: 1, temperature: 0, promptLogprobs: 0 });
    const pl = events.find((e) => e.promptLogprobs)!.promptLogprobs!;
    expect(pl.length).toBe(promptTokens.length - 1);
    expect(pl.every((e) => e.top.length === 0)).toBe(true);
    expect(events[events.length - 1]!.usage?.cachedTokens).toBe(0);
  });

  it('sampled-token logprobs at temperature 0 are the plain log-softmax, the chosen token ranked first', async () => {
    const logits = await model.evaluate(promptTokens);
    const events = await run({ promptTokens, maxTokens: 1, temperature: 0, logprobs: 5 });
    const lp = events.flatMap((e) => e.logprobs ?? []);
    expect(lp.length).toBe(1);
    const ls = logSoftmax(logits.subarray((promptTokens.length - 1) * V));
    expect(lp[0]!.rank).toBe(1);
    expect(lp[0]!.logprob).toBeCloseTo(Math.max(...ls), 4);
    expect(lp[0]!.top.length).toBe(5);
    expect(lp[0]!.top[0]!.token).toBe(lp[0]!.token);
  });

  it('rejects more prompt logprobs than maxLogprobs', async () => {
    const events = await run({ promptTokens, maxTokens: 1, promptLogprobs: 21 });
    expect(events[0]!.finishReason).toBe('error');
    expect(events[0]!.error?.message).toMatch(/greater than max allowed: 20/);
  });
});
