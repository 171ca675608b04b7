// Continuous batching must not change results: a request's tokens alone equal its tokens among many others
// (greedy and seeded sampling), and 64 concurrent requests all finish.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine, Model } from '../../lib/index.js';
import { collect, prompts } from '../helpers/engine-run.js';
import { stories260K } from '../helpers/shared.js';

let model: Model;
let engine: Engine;

beforeAll(async () => {
  model = await Model.load(stories260K);
  engine = await Engine.create(model, { kvCacheMemory: 16 << 20, maxNumSeqs: 64, maxNumBatchedTokens: 256, threads: 2 });
});

afterAll(async () => {
  await engine.close();
});

describe('batch invariance', () => {
  const all = prompts(17, 3, 60, 512, 7);

  it('greedy tokens alone equal tokens among 16 concurrent requests of different lengths', async () => {
    const alone = await collect(engine, { promptTokens: all[0]!, maxTokens: 48, temperature: 0 });
    const together = await Promise.all(all.map((p, i) => collect(engine, { promptTokens: p, maxTokens: i === 0 ? 48 : 20 + i * 3, temperature: 0 })));
    expect(together[0]!.tokens).toEqual(alone.tokens);
    expect(alone.tokens.length).toBe(48);
    for (const [i, r] of together.entries()) expect(r.last.finishReason, `request ${i}`).toBe('length');
  });

  it('logits are bitwise the same whatever the batch: every prefix evaluated alone equals its row of the whole', async () => {
    // stories260K's feed-forward is 172 wide: vector groups plus a scalar tail in each row, and F32 rows
    // that are not a multiple of the vector width. Tokens alone cannot show a last-bit difference.
    const v = model.info.vocabSize;
    for (const p of prompts(3, 5, 24, 512, 91)) {
      const whole = await model.evaluate(p, { threads: 2 });
      for (let k = 1; k <= p.length; k++) {
        const part = await model.evaluate(p.slice(0, k), { threads: 1 });
        expect(part.subarray((k - 1) * v, k * v)).toEqual(whole.subarray((k - 1) * v, k * v));
      }
    }
  });

  it('seeded sampling is the same alone and batched', async () => {
    const req = { promptTokens: all[3]!, maxTokens: 40, temperature: 1, topP: 0.95, seed: 1234 };
    const alone = await collect(engine, req);
    const together = await Promise.all([
      collect(engine, req),
      ...all.slice(5, 16).map((p, i) => collect(engine, { promptTokens: p, maxTokens: 30, temperature: 0.8, seed: i })),
    ]);
    expect(together[0]!.tokens).toEqual(alone.tokens);
  });

  it('different seeds give different samples', async () => {
    const base = { promptTokens: all[4]!, maxTokens: 32, temperature: 1.2 };
    const a = await collect(engine, { ...base, seed: 1 });
    const b = await collect(engine, { ...base, seed: 2 });
    expect(a.tokens).not.toEqual(b.tokens);
  });

  it('64 concurrent requests all finish with their usage', async () => {
    const many = prompts(64, 2, 40, 512, 99);
    const results = await Promise.all(many.map((p) => collect(engine, { promptTokens: p, maxTokens: 16, temperature: 0 })));
    for (const [i, r] of results.entries()) {
      expect(r.last.finishReason).toBe('length');
      expect(r.tokens.length).toBe(16);
      expect(r.last.usage).toMatchObject({ promptTokens: many[i]!.length, completionTokens: 16 });
    }
    const stats = engine.stats();
    expect(stats.running).toBe(0);
    expect(stats.waiting).toBe(0);
  });
});

describe('engine-wide seed', () => {
  it('makes requests without a seed reproducible across engines; another seed gives other samples', async () => {
    const run = async (seed: number): Promise<number[][]> => {
      const e = await Engine.create(model, { kvCacheMemory: 4 << 20, threads: 1, seed });
      const out = [];
      for (let i = 0; i < 3; i++) out.push((await collect(e, { promptTokens: [1, 403, 407], maxTokens: 24, temperature: 1 })).tokens);
      await e.close();
      return out;
    };
    const a = await run(42);
    expect(await run(42)).toEqual(a);
    expect(await run(43)).not.toEqual(a);
  });
});
