// Engine life cycle and the boundary's promises: exactly one finish per request, idempotent abort, close
// twice, disposed after close, priority order, and errors for bad requests that leave the engine serving.
import { pbkdf2 } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DisposedError, Engine, type GenerateEvent, InvalidArgumentError, Model } from '../../lib/index.js';
import { collect } from '../helpers/engine-run.js';
import { stories260K } from '../helpers/shared.js';

describe('engine life cycle', () => {
  it('close aborts running requests (each ends with abort), twice is fine, later calls throw disposed', async () => {
    const model = await Model.load(stories260K);
    const engine = await Engine.create(model, { kvCacheMemory: 1 << 20, threads: 1 });
    // Each run reports its first event, so close() meets three requests that are under way.
    const started: Promise<void>[] = [];
    const runs = [1, 2, 3].map(() => {
      let markStarted = (): void => {};
      started.push(new Promise<void>((resolve) => (markStarted = resolve)));
      return (async () => {
        const events: GenerateEvent[] = [];
        for await (const ev of engine.generate({ promptTokens: [1, 403, 407], temperature: 0, ignoreEos: true })) {
          events.push(ev);
          markStarted();
        }
        return events;
      })();
    });
    await Promise.all(started);
    await Promise.all([engine.close(), engine.close()]);
    await engine.close();
    for (const events of await Promise.all(runs)) {
      expect(events.at(-1)!.finishReason).toBe('abort');
      expect(events.filter((e) => e.finishReason).length).toBe(1);
    }
    expect(() => engine.generate({ promptTokens: [1] })).toThrow(DisposedError);
    expect(() => engine.stats()).toThrow(DisposedError);
  });

  it('close stops what runs at once, even while every libuv thread is busy', async () => {
    // close()'s wait for the engine thread runs on a libuv worker. Before the fix the stop itself was asked
    // for there too, so with the pool busy a 100-token request (~15 ms) ran to its end ('length') first.
    const model = await Model.load(stories260K);
    const engine = await Engine.create(model, { kvCacheMemory: 1 << 20, threads: 1 });
    try {
      const running = collect(engine, { promptTokens: [1, 403], maxTokens: 100, ignoreEos: true });
      const poolSize = Number(process.env.UV_THREADPOOL_SIZE ?? 4);
      const busy = Array.from({ length: poolSize }, () => new Promise<void>((resolve) => pbkdf2('x', 'y', 300_000, 32, 'sha256', () => resolve())));
      await engine.close();
      expect((await running).last.finishReason).toBe('abort');
      await Promise.all(busy);
    } finally {
      model.dispose();
    }
  });

  it('an already-aborted signal ends at once; aborting after the finish is a no-op', async () => {
    const model = await Model.load(stories260K);
    const engine = await Engine.create(model, { kvCacheMemory: 1 << 20, threads: 1 });
    const early = new AbortController();
    early.abort();
    const r = await collect(engine, { promptTokens: [1, 403], maxTokens: 5 }, early.signal);
    expect(r.last.finishReason).toBe('abort');
    const late = new AbortController();
    const done = await collect(engine, { promptTokens: [1, 403], maxTokens: 3, temperature: 0 }, late.signal);
    late.abort();
    expect(done.last.finishReason).toBe('length');
    const after = await collect(engine, { promptTokens: [1, 403], maxTokens: 3, temperature: 0 });
    expect(after.tokens).toEqual(done.tokens);
    await engine.close();
  });

  it('runs waiting requests by priority (lower first, ties by arrival) under the priority policy', async () => {
    const model = await Model.load(stories260K);
    const engine = await Engine.create(model, { kvCacheMemory: 1 << 20, threads: 1, maxNumSeqs: 1, schedulingPolicy: 'priority' });
    const order: string[] = [];
    const run = async (name: string, priority: number, maxTokens: number, onFirstToken?: () => void): Promise<void> => {
      for await (const ev of engine.generate({ promptTokens: [1, 403], maxTokens, temperature: 0, ignoreEos: true, priority })) {
        if (ev.tokenIds.length > 0) onFirstToken?.();
        if (ev.finishReason) order.push(name);
      }
    };
    // A blocker nothing outranks holds the only sequence slot while the others queue up behind it.
    let release!: () => void;
    const started = new Promise<void>((r) => (release = r));
    const blocker = run('blocker', -100, 200, () => release());
    await started;
    await Promise.all([blocker, run('low', 10, 4), run('high', -3, 4), run('mid', 5, 4), run('mid2', 5, 4)]);
    await engine.close();
    // The queued requests run by priority, ties by arrival. The blocker's place is not asserted: `order`
    // records when each consumer reaches its finish event, and under load the blocker's consumer can still
    // be working through its ~200 queued events when the short requests' consumers are done.
    expect(order.filter((n) => n !== 'blocker')).toEqual(['high', 'mid', 'mid2', 'low']);
  });

  it('bad requests fail alone: validation errors throw, engine-side errors end with finishReason error', async () => {
    const model = await Model.load(stories260K);
    const engine = await Engine.create(model, { kvCacheMemory: 1 << 20, threads: 1, maxModelLen: 64 });
    expect(() => engine.generate({ promptTokens: [] })).toThrow(InvalidArgumentError);
    expect(() => engine.generate({ promptTokens: [1], temperature: -1 })).toThrow(/temperature/);
    expect(() => engine.generate({ promptTokens: [1], topP: 0 })).toThrow(/topP/);
    const oov = await collect(engine, { promptTokens: [1, 99_999], maxTokens: 2 });
    expect(oov.last.finishReason).toBe('error');
    expect(oov.last.error?.message).toMatch(/out of vocabulary/);
    const tooLong = await collect(engine, { promptTokens: Array.from({ length: 60 }, () => 403), maxTokens: 10 });
    expect(tooLong.last.finishReason).toBe('error');
    expect(tooLong.last.error?.message).toMatch(/maximum context length is 64 tokens/);
    const fine = await collect(engine, { promptTokens: [1, 403], maxTokens: 4, temperature: 0 });
    expect(fine.last.finishReason).toBe('length');
    const untilFull = await collect(engine, { promptTokens: Array.from({ length: 60 }, () => 403), temperature: 0, ignoreEos: true });
    expect(untilFull.last.finishReason).toBe('length');
    expect(untilFull.tokens.length).toBe(4);
    await engine.close();
  });

  it('refuses to run a vocab-only model', async () => {
    const model = await Model.load(stories260K, { vocabOnly: true });
    await expect(Engine.create(model)).rejects.toThrow(/vocabOnly/);
  });
});
