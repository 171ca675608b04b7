// The stats a caller reads are never behind the records it was handed: the engine thread frees a finished
// (or aborted) request's sequences and publishes its stats before the request's final record, so code
// woken by that record reads running/waiting without it and its KV blocks free, with no polling. And
// leaving a generate() loop early aborts the request and returns once it is gone.
import { getEventListeners } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine, type GenerateRequest, Model } from '../../lib/index.js';
import { prompts } from '../helpers/engine-run.js';
import { stories260K } from '../helpers/shared.js';

let model: Model;
let engine: Engine;

beforeAll(async () => {
  model = await Model.load(stories260K);
  // maxNumBatchedTokens 16: the 60-token prompts below take several steps of prefill.
  engine = await Engine.create(model, { kvCacheMemory: 64 * 10_240, threads: 1, maxNumBatchedTokens: 16 });
});

afterAll(async () => {
  await engine.close();
  model.dispose();
});

// Requests ending every way a step can end them (with the last event's finishReason where it is fixed):
// length, a stop string, EOS, n > 1 choices finishing in different steps, beam search, a prompt-logprobs
// request, a refused one.
const endings: [string, GenerateRequest, string | undefined][] = [
  ['length', { promptTokens: [1, 403, 407], maxTokens: 5, temperature: 0 }, 'length'],
  ['stop string', { promptTokens: [1, 403, 407], maxTokens: 50, temperature: 0, stop: [' '] }, 'stop'],
  ['EOS', { promptTokens: [1, 403, 407], maxTokens: 50, allowedTokenIds: [2] }, 'stop'], // token 2: stories260K's EOS
  ['n = 3', { promptTokens: prompts(1, 60, 60, 512, 3)[0]!, maxTokens: 6, temperature: 1, seed: 5, n: 3, stop: ['.'] }, undefined],
  ['beam search', { promptTokens: [1, 403, 407], maxTokens: 4, useBeamSearch: true, n: 2 }, undefined],
  ['prompt logprobs', { promptTokens: prompts(1, 60, 60, 512, 4)[0]!, maxTokens: 2, temperature: 0, promptLogprobs: 2 }, 'length'],
  ['refused', { promptTokens: [1, 403, 100_000], maxTokens: 2 }, 'error'],
];

function expectIdle(what: string): void {
  const s = engine.stats();
  expect({ what, running: s.running, waiting: s.waiting, kvBlocksFree: s.kvBlocksFree }).toEqual({ what, running: 0, waiting: 0, kvBlocksFree: s.kvBlocksTotal });
}

describe('stats are current when a record arrives', () => {
  it('at the last event of a request, the request is no longer counted and its blocks are free', async () => {
    for (const [what, request, finish] of endings) {
      let last = false;
      for await (const ev of engine.generate(request)) {
        if (!ev.done) continue;
        last = true;
        if (finish) expect(ev.finishReason, what).toBe(finish);
        expectIdle(`${what}: at its last event`);
      }
      expect(last, what).toBe(true);
    }
  });

  it('concurrent requests: at each one\'s last event, running + waiting counts only the others', async () => {
    const live = new Set<number>();
    await Promise.all(
      prompts(6, 20, 60, 512, 7).map(async (promptTokens, i) => {
        live.add(i);
        for await (const ev of engine.generate({ promptTokens, maxTokens: 3 + 2 * i, temperature: 0, ignoreEos: true })) {
          if (!ev.done) continue;
          live.delete(i);
          const s = engine.stats();
          expect(s.running + s.waiting).toBeLessThanOrEqual(live.size);
        }
      }),
    );
    expectIdle('after all six');
  });
});

describe('leaving a generate() loop early', () => {
  const long: GenerateRequest = { promptTokens: [1, 403, 407], maxTokens: 1000, temperature: 0, ignoreEos: true };

  it('break aborts the request: right after the loop the engine is idle and every block is free', async () => {
    const before = engine.stats().generationTokens;
    let seen = 0;
    for await (const ev of engine.generate(long)) {
      seen += ev.tokenIds.length;
      if (seen >= 3) break;
    }
    expectIdle('after break');
    // It was aborted, not run to its 1000 tokens.
    expect(engine.stats().generationTokens - before).toBeLessThan(200);
  });

  it('so do return and a throw from the loop, for every choice of an n > 1 request', async () => {
    const firstTokens = async (): Promise<number> => {
      for await (const ev of engine.generate({ ...long, n: 3, temperature: 1, seed: 1 })) return ev.index;
      return -1;
    };
    expect(await firstTokens()).toBeGreaterThanOrEqual(0);
    expectIdle('after return');
    const thrown = await (async () => {
      for await (const _ of engine.generate({ ...long, promptTokens: prompts(1, 60, 60, 512, 9)[0]! })) throw new Error('consumer failed');
    })().catch((e: unknown) => e);
    expect((thrown as Error).message).toBe('consumer failed');
    expectIdle('after a throw');
  });

  it('a break after the last event, and a signal aborted after a break, change nothing', async () => {
    const controller = new AbortController();
    for await (const ev of engine.generate({ promptTokens: [1, 403], maxTokens: 2, temperature: 0 }, { signal: controller.signal })) {
      if (ev.done) break;
    }
    controller.abort();
    expectIdle('after a break at the last event');
    const again = new AbortController();
    for await (const _ of engine.generate(long, { signal: again.signal })) break;
    again.abort();
    expectIdle('after break, then abort');
  });

  it('the abort listener leaves the signal when the request ends', async () => {
    const controller = new AbortController();
    for await (const ev of engine.generate({ promptTokens: [1, 403], maxTokens: 2, temperature: 0 }, { signal: controller.signal })) {
      if (ev.done) expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    }
    for await (const _ of engine.generate(long, { signal: controller.signal })) break;
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });
});
