// Focused regressions for what the randomized engine stress test (engine-stress.test.ts) found.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine, type GenerateEvent, type GenerateRequest, Model } from '../../lib/index.js';
import { collect, prompts } from '../helpers/engine-run.js';
import { stories260K } from '../helpers/shared.js';

const BLOCK_BYTES = 10_240; // one stories260K KV block (16 tokens)

let model: Model;

beforeAll(async () => {
  model = await Model.load(stories260K);
});

afterAll(() => {
  model.dispose();
});

async function run(engine: Engine, request: GenerateRequest): Promise<GenerateEvent[]> {
  return (await collect(engine, request)).events;
}

describe('engine stress regressions', () => {
  it('an n > 1 request that outgrows the pool after forking ends every choice with the error and its usage', async () => {
    // 4 choices fork a 98-token prompt (6 shared full blocks) and grow to 161 tokens each: 6 + 4 × 5 = 26
    // blocks > 15. The request preempts itself; recomputed, each choice needs its own 11 blocks, more than
    // the pool, so the scheduler refuses it. Before the fix one error record (choice 0, usage zero) ended
    // the request and choices 1..3 never got a finish.
    const engine = await Engine.create(model, { kvCacheMemory: 15 * BLOCK_BYTES, threads: 1, maxNumSeqs: 4 });
    try {
      const promptTokens = prompts(1, 98, 98, 512, 3)[0]!;
      const events = await run(engine, { promptTokens, n: 4, maxTokens: 63, temperature: 1, seed: 1, ignoreEos: true });
      const finishes = events.filter((e) => e.finishReason);
      expect(finishes.map((e) => e.index).sort()).toEqual([0, 1, 2, 3]);
      for (const f of finishes) {
        expect(f.finishReason).toBe('error');
        expect(f.error?.code).toBe('invalid_argument');
        expect(f.error?.message).toMatch(/KV blocks/);
        const streamed = events.filter((e) => e.index === f.index).flatMap((e) => e.tokenIds).length;
        expect(streamed).toBeGreaterThan(0);
        expect(f.usage).toEqual({ promptTokens: 98, completionTokens: streamed, cachedTokens: 0 });
      }
      expect(events.filter((e) => e.done).length).toBe(1);
      expect(events.at(-1)!.done).toBe(true);
      const stats = engine.stats();
      expect([stats.running, stats.waiting, stats.kvBlocksFree]).toEqual([0, 0, 15]);
    } finally {
      await engine.close();
    }
  });

  it('a finish record is published after the stats: the caller it wakes already sees the request gone', async () => {
    // A 600-token prompt prefilled 32 tokens a step keeps a step in flight while a request is refused by
    // the scheduler (larger than the pool) and while one is aborted. Before the fix their records reached
    // the caller during that step, while stats() still counted them as waiting.
    const engine = await Engine.create(model, { kvCacheMemory: 100 * BLOCK_BYTES, threads: 1, maxNumBatchedTokens: 32, enablePrefixCaching: false });
    try {
      const busy = prompts(1, 600, 600, 512, 8)[0]!;
      const tooBig = prompts(1, 1700, 1700, 512, 9)[0]!; // 107 blocks > 100
      let backgroundLive = true;
      const background = run(engine, { promptTokens: busy, maxTokens: 1 }).then(() => {
        backgroundLive = false;
      });
      let smallLive = false;
      const others = (): number => (backgroundLive ? 1 : 0) + (smallLive ? 1 : 0);
      for (let i = 0; i < 3; i++) {
        // The refused request and a small one that waits behind the prefill (its chunks take every
        // step's budget) are submitted together: the engine takes both in one inbox batch, so when the
        // refusal arrives the small one was admitted (and counted waiting in published stats). Aborted
        // then, its abort meets the prefill's next step.
        const controller = new AbortController();
        const refused = engine.generate({ promptTokens: tooBig, maxTokens: 1 });
        smallLive = true;
        const small = (async () => {
          for await (const ev of engine.generate({ promptTokens: [1, 403], maxTokens: 4 }, { signal: controller.signal })) {
            if (!ev.done) continue;
            expect(ev.finishReason).toBe('abort');
            smallLive = false;
            const stats = engine.stats();
            expect(stats.running + stats.waiting).toBeLessThanOrEqual(others());
          }
        })();
        for await (const ev of refused) {
          if (!ev.done) continue;
          expect(ev.finishReason).toBe('error');
          const stats = engine.stats();
          expect(stats.running + stats.waiting).toBeLessThanOrEqual(others());
        }
        controller.abort();
        await small;
        expect(smallLive).toBe(false);
      }
      expect(backgroundLive).toBe(true); // every case above met a step in flight
      await background;
    } finally {
      await engine.close();
    }
  });

  it('prompt logprobs of a one-token prompt: an empty list with the first token, for top 0 as for top N', async () => {
    // Before the fix promptLogprobs: 0 on a one-token prompt sent nothing (the record test was "entries
    // or top > 0"), while promptLogprobs: 2 sent [].
    const engine = await Engine.create(model, { kvCacheMemory: 10 * BLOCK_BYTES, threads: 1 });
    try {
      for (const promptLogprobs of [0, 2]) {
        const events = await run(engine, { promptTokens: [1], maxTokens: 2, temperature: 0, promptLogprobs });
        expect(events[0]!.promptLogprobs, `promptLogprobs ${promptLogprobs}`).toEqual([]);
        expect(events.slice(1).some((e) => e.promptLogprobs)).toBe(false);
      }
      const plain = await run(engine, { promptTokens: [1], maxTokens: 2, temperature: 0 });
      expect(plain.some((e) => e.promptLogprobs)).toBe(false);
    } finally {
      await engine.close();
    }
  });

  it('a prompt that fills the context is refused with the prompt-length message, not one that adds up wrong', async () => {
    // Before the fix an omitted maxTokens counted as 0 in the message: "maximum context length is 8
    // tokens. However, you requested 8 tokens (8 in the messages, 0 in the completion)".
    const engine = await Engine.create(model, { kvCacheMemory: 10 * BLOCK_BYTES, threads: 1, maxModelLen: 8 });
    try {
      const promptTokens = prompts(1, 8, 8, 512, 4)[0]!;
      const [last] = (await run(engine, { promptTokens })).slice(-1);
      expect(last!.finishReason).toBe('error');
      expect(last!.error?.code).toBe('invalid_argument');
      expect(last!.error?.message).toBe(
        'The decoder prompt (length 8) plus the number of requested output tokens (at least 1) is longer than the maximum model length of 8. ' +
          'Make sure that `max_model_len` is no smaller than the number of text tokens plus at least one output token.',
      );
      const [tooMany] = (await run(engine, { promptTokens: promptTokens.slice(0, 5), maxTokens: 4 })).slice(-1);
      expect(tooMany!.error?.message).toMatch(/maximum context length is 8 tokens\. However, you requested 9 tokens \(5 in the messages, 4 in the completion\)/);
      // the sum is not a 32-bit one (it read -2147483646)
      const [huge] = (await run(engine, { promptTokens: promptTokens.slice(0, 3), maxTokens: 2 ** 31 - 1 })).slice(-1);
      expect(huge!.error?.message).toMatch(/However, you requested 2147483650 tokens \(3 in the messages, 2147483647 in the completion\)/);
    } finally {
      await engine.close();
    }
  });

  it('aborting a request while the engine closes is a no-op, not an uncaught exception', async () => {
    // Before the fix the signal's listener called the native abort, which throws 'engine is closed'
    // once close() has begun: thrown from an AbortSignal listener, that is an uncaught exception.
    const engine = await Engine.create(model, { kvCacheMemory: 10 * BLOCK_BYTES, threads: 1 });
    const uncaught: unknown[] = [];
    const onUncaught = (error: unknown): void => {
      uncaught.push(error);
    };
    process.prependListener('uncaughtException', onUncaught);
    try {
      const controller = new AbortController();
      const events: GenerateEvent[] = [];
      const consumed = (async () => {
        for await (const ev of engine.generate({ promptTokens: [1, 403], maxTokens: 100, ignoreEos: true }, { signal: controller.signal })) events.push(ev);
      })();
      const closing = engine.close();
      controller.abort();
      await closing;
      await consumed;
      // An error thrown by an AbortSignal listener is rethrown from process.nextTick: the next macrotask
      // runs after it.
      await new Promise((r) => setImmediate(r));
      expect(uncaught).toEqual([]);
      expect(events.at(-1)).toMatchObject({ finishReason: 'abort', done: true });
    } finally {
      process.removeListener('uncaughtException', onUncaught);
    }
  });

  it('priority preemption of a request already planned in the step leaves the batch tokens in place', async () => {
    // A (priority 5, a 500-token prompt: 32 of 33 blocks, up to 33 with its 28 tokens) is decoding when B
    // (priority 0, 20 tokens: 2 blocks) arrives. The next step plans A's decode token, then preempts A for
    // B's blocks: before the fix A's token stayed at the front of the batch, B's prompt was fed shifted by
    // one position (its last token dropped) and B's output and KV were wrong.
    const reference = await Engine.create(model, { kvCacheMemory: 64 * BLOCK_BYTES, threads: 1 });
    const engine = await Engine.create(model, { kvCacheMemory: 33 * BLOCK_BYTES, threads: 1, schedulingPolicy: 'priority', enablePrefixCaching: false });
    try {
      const a = { promptTokens: prompts(1, 500, 500, 512, 50)[0]!, maxTokens: 28, temperature: 0, ignoreEos: true, priority: 5 };
      const b = { promptTokens: [1, 403, 407, 261, 378, 300, 400, 270, 290, 350, 303, 411, 420, 287, 265, 402, 345, 299, 288, 300], maxTokens: 6, temperature: 0, ignoreEos: true, priority: 0 };
      const expected = await Promise.all([a, b].map(async (r) => (await run(reference, r)).flatMap((e) => e.tokenIds)));
      const runA = run(engine, a);
      // A reports nothing before its prefill ends. A one-token request of A's priority submitted after it
      // is the clock: admitted no earlier than A, it fits beside A (32 + 1 blocks) and ends in its first
      // step, so when it is over A's prefill has run and B meets A decoding.
      await run(engine, { promptTokens: [1], maxTokens: 1, temperature: 0, priority: 5 });
      const gotB = (await run(engine, b)).flatMap((e) => e.tokenIds);
      const gotA = (await runA).flatMap((e) => e.tokenIds);
      expect(engine.stats().preemptions).toBe(1);
      expect(gotB).toEqual(expected[1]);
      expect(gotA).toEqual(expected[0]);
    } finally {
      await engine.close();
      await reference.close();
    }
  });
});
