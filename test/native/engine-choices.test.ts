// n > 1 choices share the prompt's KV blocks (computed once), each with its own random stream; repetition
// detection ends a generation that loops.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine, type GenerateEvent, Model } from '../../lib/index.js';
import { prompts, tokensByChoice } from '../helpers/engine-run.js';
import { stories260K } from '../helpers/shared.js';

let model: Model;
let engine: Engine;

beforeAll(async () => {
  model = await Model.load(stories260K);
  engine = await Engine.create(model, { kvCacheMemory: 4 << 20, threads: 1, enablePrefixCaching: false });
});

afterAll(async () => {
  await engine.close();
});

async function run(request: Parameters<Engine['generate']>[0]): Promise<GenerateEvent[]> {
  const events: GenerateEvent[] = [];
  for await (const ev of engine.generate(request)) events.push(ev);
  return events;
}

describe('n > 1', () => {
  const prompt = prompts(1, 50, 50, 512, 21)[0]!;

  it('computes the prompt once, forks n choices with their own streams, ends with one done event', async () => {
    const before = engine.stats().tokensComputed;
    const events = await run({ promptTokens: prompt, n: 4, maxTokens: 12, temperature: 1, seed: 5, ignoreEos: true });
    const computed = engine.stats().tokensComputed - before;
    // 50 prompt positions once, then 11 decode positions per choice (the 12th token is never fed back).
    expect(computed).toBe(50 + 4 * 11);
    const choices = tokensByChoice(events, 4);
    for (const c of choices) expect(c.length).toBe(12);
    expect(new Set(choices.map((c) => c.join())).size).toBeGreaterThan(1);
    const finishes = events.filter((e) => e.finishReason);
    expect(finishes.map((e) => e.index).sort()).toEqual([0, 1, 2, 3]);
    expect(events.filter((e) => e.done).length).toBe(1);
    expect(events[events.length - 1]!.done).toBe(true);
    for (const f of finishes) expect(f.usage).toMatchObject({ promptTokens: 50, completionTokens: 12 });
  });

  it('is reproducible with a seed, and choice i equals a single request of the same seed only for i = 0', async () => {
    const a = tokensByChoice(await run({ promptTokens: prompt, n: 3, maxTokens: 10, temperature: 1, seed: 77 }), 3);
    const b = tokensByChoice(await run({ promptTokens: prompt, n: 3, maxTokens: 10, temperature: 1, seed: 77 }), 3);
    expect(b).toEqual(a);
    const single = tokensByChoice(await run({ promptTokens: prompt, maxTokens: 10, temperature: 1, seed: 77 }), 1);
    expect(single[0]).toEqual(a[0]);
  });

  it('greedy choices are identical', async () => {
    const c = tokensByChoice(await run({ promptTokens: prompt, n: 2, maxTokens: 8, temperature: 0 }), 2);
    expect(c[1]).toEqual(c[0]);
  });
});

describe('repetition detection', () => {
  it('stops after min_count repeats of a forced one-token pattern, with finishReason repetition', async () => {
    const events = await run({
      promptTokens: [1, 403, 407],
      maxTokens: 100,
      temperature: 0,
      logitBias: { 300: 100 },
      repetitionDetection: { maxPatternSize: 4, minPatternSize: 1, minCount: 5 },
    });
    const tokens = events.flatMap((e) => e.tokenIds);
    const last = events[events.length - 1]!;
    expect(last.finishReason).toBe('repetition');
    expect(last.stopReason).toBe('repetition_detected');
    expect(tokens).toEqual([300, 300, 300, 300, 300]);
  });

  it('rejects invalid parameters with vLLM messages', async () => {
    const events = await run({ promptTokens: [1, 403], maxTokens: 5, repetitionDetection: { maxPatternSize: 3, minCount: 1 } });
    expect(events[0]!.finishReason).toBe('error');
    expect(events[0]!.error?.message).toMatch(/min_count/);
  });
});
