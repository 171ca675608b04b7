// Focused regressions for what the randomized engine stress test (engine-stress.test.ts) found.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine, type GenerateEvent, Model } from '../../lib/index.js';
import { prompts } from '../helpers/engine-run.js';
import { stories260K } from '../helpers/shared.js';

const BLOCK_BYTES = 10_240; // one stories260K KV block (16 tokens)

let model: Model;

beforeAll(async () => {
  model = await Model.load(stories260K);
});

afterAll(() => {
  model.dispose();
});

async function run(engine: Engine, request: Parameters<Engine['generate']>[0]): Promise<GenerateEvent[]> {
  const events: GenerateEvent[] = [];
  for await (const ev of engine.generate(request)) events.push(ev);
  return events;
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
});
