// The paged KV cache through the engine: preemption and recompute, prefix caching, cache_salt isolation,
// aborts that return every block, and a request larger than the whole pool.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine, Model } from '../../lib/index.js';
import { collect, prompts, waitFor } from '../helpers/engine-run.js';
import { stories260K } from '../helpers/shared.js';

let model: Model;
// stories260K: 5 layers × 4 KV heads × head dim 8, F16 K and V → 5 × 16 × 32 × 2 × 2 = 10,240 bytes a block.
const blockBytes = 10_240;

beforeAll(async () => {
  model = await Model.load(stories260K);
});

afterAll(() => {
  model.dispose();
});

describe('preemption', () => {
  it('recompute after preemption gives the same tokens as an unconstrained run', async () => {
    const ps = prompts(8, 20, 40, 512, 3);
    const big = await Engine.create(model, { kvCacheMemory: 400 * blockBytes, threads: 1 });
    const expected = await Promise.all(ps.map((p) => collect(big, { promptTokens: p, maxTokens: 60, temperature: 0 })));
    await big.close();

    // 24 blocks hold 384 tokens: eight sequences growing to ~100 tokens each cannot all stay resident.
    const small = await Engine.create(model, { kvCacheMemory: 24 * blockBytes, threads: 1 });
    expect(small.kvBlocksTotal).toBe(24);
    const got = await Promise.all(ps.map((p) => collect(small, { promptTokens: p, maxTokens: 60, temperature: 0 })));
    const stats = small.stats();
    await small.close();
    expect(stats.preemptions).toBeGreaterThan(0);
    for (const [i, r] of got.entries()) expect(r.tokens, `request ${i}`).toEqual(expected[i]!.tokens);
  });
});

describe('prefix caching', () => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await Engine.create(model, { kvCacheMemory: 200 * blockBytes, threads: 1 });
  });
  afterAll(async () => {
    await engine.close();
  });

  const prompt = prompts(1, 70, 70, 512, 11)[0]!;

  it('a repeated prompt hits the cache, counts cached tokens and gives identical output', async () => {
    const first = await collect(engine, { promptTokens: prompt, maxTokens: 20, temperature: 0 });
    const before = engine.stats();
    const second = await collect(engine, { promptTokens: prompt, maxTokens: 20, temperature: 0 });
    const after = engine.stats();
    expect(first.last.usage?.cachedTokens).toBe(0);
    expect(second.last.usage?.cachedTokens).toBe(64); // four full blocks; the last token is always computed
    expect(second.tokens).toEqual(first.tokens);
    expect(after.prefixCacheHits - before.prefixCacheHits).toBe(64);
    expect(after.prefixCacheQueries).toBeGreaterThan(before.prefixCacheQueries);
  });

  it('salted and unsalted requests never share blocks; equal salts do', async () => {
    const salted = await collect(engine, { promptTokens: prompt, maxTokens: 4, temperature: 0, cacheSalt: 'team-a' });
    expect(salted.last.usage?.cachedTokens).toBe(0);
    const again = await collect(engine, { promptTokens: prompt, maxTokens: 4, temperature: 0, cacheSalt: 'team-a' });
    expect(again.last.usage?.cachedTokens).toBe(64);
    const other = await collect(engine, { promptTokens: prompt, maxTokens: 4, temperature: 0, cacheSalt: 'team-b' });
    expect(other.last.usage?.cachedTokens).toBe(0);
    expect(other.tokens).toEqual(salted.tokens);
  });

  it('can be turned off', async () => {
    const off = await Engine.create(model, { kvCacheMemory: 50 * blockBytes, threads: 1, enablePrefixCaching: false });
    await collect(off, { promptTokens: prompt, maxTokens: 2, temperature: 0 });
    const second = await collect(off, { promptTokens: prompt, maxTokens: 2, temperature: 0 });
    await off.close();
    expect(second.last.usage?.cachedTokens).toBe(0);
  });
});

describe('aborts and oversized requests', () => {
  it('aborting mid-prefill and mid-decode ends with abort and returns every block', async () => {
    // One token per step so a 200-token prompt is in prefill for many steps.
    const engine = await Engine.create(model, { kvCacheMemory: 64 * blockBytes, threads: 1, maxNumBatchedTokens: 4, enablePrefixCaching: false });
    const total = engine.stats().kvBlocksTotal;

    const prefill = new AbortController();
    const longPrompt = prompts(1, 200, 200, 512, 5)[0]!;
    const pending = collect(engine, { promptTokens: longPrompt, maxTokens: 10, temperature: 0 }, prefill.signal);
    // The prompt reports nothing while it is prefilled, and a second request cannot serve as a clock: the
    // engine thread runs a tiny model's steps faster than JS can submit. So this one condition is polled.
    await waitFor(() => engine.stats().kvBlocksFree < total);
    prefill.abort();
    const aborted = await pending;
    expect(aborted.last.finishReason).toBe('abort');
    expect(aborted.tokens).toEqual([]);
    expect(engine.stats().kvBlocksFree).toBe(total); // freed before the abort record was handed over

    const decode = new AbortController();
    const events: number[] = [];
    let finish: string | undefined;
    for await (const ev of engine.generate({ promptTokens: [1, 403], maxTokens: 1000, temperature: 0, ignoreEos: true }, { signal: decode.signal })) {
      events.push(...ev.tokenIds);
      if (events.length >= 5 && !decode.signal.aborted) decode.abort();
      finish = ev.finishReason ?? finish;
    }
    expect(finish).toBe('abort');
    expect(events.length).toBeGreaterThanOrEqual(5);
    expect(events.length).toBeLessThan(1000);
    expect(engine.stats()).toMatchObject({ kvBlocksFree: total, running: 0, waiting: 0 });
    await engine.close();
  });

  it('a request larger than the whole KV pool fails with a clear error and the engine keeps serving', async () => {
    const engine = await Engine.create(model, { kvCacheMemory: 8 * blockBytes, threads: 1 });
    const tooBig = prompts(1, 200, 200, 512, 9)[0]!; // 13 blocks > 8
    const [failed, fine] = await Promise.all([
      collect(engine, { promptTokens: tooBig, maxTokens: 4, temperature: 0 }),
      collect(engine, { promptTokens: [1, 403, 407], maxTokens: 8, temperature: 0 }),
    ]);
    expect(failed.last.finishReason).toBe('error');
    expect(failed.last.error?.message).toMatch(/KV|block|pool|cache/i);
    expect(fine.last.finishReason).toBe('length');
    expect(fine.tokens.length).toBe(8);
    await engine.close();
  });

  it('a request larger than the pool is refused at once, not after the requests queued ahead of it', async () => {
    // 32 tokens a step: the 608-token prompt's prefill takes every step's whole budget for 19 steps, so the
    // small request submitted after it waits. Before the fix the refused request was queued behind that
    // one (admission stops at the first request without budget) and refused only after the long prompt's
    // first token, one step after its prefill.
    const engine = await Engine.create(model, { kvCacheMemory: 100 * blockBytes, threads: 1, maxNumBatchedTokens: 32, enablePrefixCaching: false });
    try {
      const [long, tooBig] = [prompts(1, 608, 608, 512, 8)[0]!, prompts(1, 1700, 1700, 512, 9)[0]!]; // 107 blocks > 100
      expect(engine.maxModelLen).toBeGreaterThan(tooBig.length); // refused for the pool, not the context
      let streamed = 0;
      const count = async (promptTokens: number[]): Promise<void> => {
        for await (const ev of engine.generate({ promptTokens, maxTokens: 4, temperature: 0, ignoreEos: true })) streamed += ev.tokenIds.length;
      };
      const running = [count(long), count([1, 403])];
      const refused = await collect(engine, { promptTokens: tooBig, maxTokens: 4 });
      expect(streamed).toBe(0);
      expect(refused.events).toHaveLength(1);
      expect(refused.last).toMatchObject({
        finishReason: 'error',
        done: true,
        usage: { promptTokens: 1700, completionTokens: 0, cachedTokens: 0 },
      });
      expect(refused.last.error?.code).toBe('invalid_argument');
      expect(refused.last.error?.message).toBe('request needs 107 KV blocks but the pool has only 100');
      await Promise.all(running);
      expect(streamed).toBe(8);
    } finally {
      await engine.close();
    }
  });
});
