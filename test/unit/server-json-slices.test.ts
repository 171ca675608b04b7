// stringifyInSlices writes JSON.stringify's text exactly (nesting, key order, undefined/functions,
// toJSON, non-finite numbers, unicode), and builds a ~27 MB logprobs-like response without holding the
// event loop: a 1 ms interval keeps firing while it runs, its largest gap under a quarter of what one
// JSON.stringify of the body takes.
import { describe, expect, it } from 'vitest';
import { stringifyInSlices } from '../../lib/server/json-slices.js';

const text = async (v: unknown): Promise<string> => (await stringifyInSlices(v)).join('');

describe('stringifyInSlices', () => {
  it('equals JSON.stringify', async () => {
    const values: unknown[] = [
      null, 0, -1.5e-300, 'é\u2028"\\', true, [], {}, [1, 'a', null], { a: 1 },
      { z: 1, a: [1, { b: undefined, c: () => 1, d: [undefined, () => 2, Symbol('s'), NaN, Infinity] }], y: { when: new Date(0) } },
      [[[[[[1]]]]], { deep: { deeper: { deepest: [{ k: 'v' }] } } }],
      { toJSON: () => ({ replaced: [1, 2] }) },
      { choices: Array.from({ length: 3 }, (_, i) => ({ index: i, message: { role: 'assistant', content: `c${i}` }, logprobs: { content: [{ token: 'x', logprob: -0.5, bytes: [120], top_logprobs: [{ token: 'y', logprob: -1, bytes: null }] }] } })) },
    ];
    for (const v of values) expect(await text(v)).toBe(JSON.stringify(v));
  });

  it('a 27 MB response is built in slices: the event loop keeps turning', async () => {
    const top = Array.from({ length: 100 }, (_, i) => ({ token: `tok${i}`, logprob: -i / 7, bytes: [116, 111, 107] }));
    const content = Array.from({ length: 4000 }, (_, i) => ({ token: `t${i}`, logprob: -0.25, bytes: [116], top_logprobs: top }));
    const body = { id: 'x', choices: [{ index: 0, logprobs: { content } }] };
    let ticks = 0;
    let maxGap = 0;
    let last = performance.now();
    const timer = setInterval(() => {
      const now = performance.now();
      maxGap = Math.max(maxGap, now - last);
      last = now;
      ticks += 1;
    }, 1);
    const pieces = await stringifyInSlices(body);
    clearInterval(timer);
    const joined = pieces.join('');
    expect(joined.length).toBeGreaterThan(25_000_000);
    expect(joined).toBe(JSON.stringify(body));
    expect(ticks).toBeGreaterThan(10);
    // Each slice is ~4 ms of work (plus a young-generation GC now and then); the bound is relative to one
    // JSON.stringify of the same body, so a busy shared machine slows both sides alike.
    const started = performance.now();
    JSON.stringify(body);
    const whole = performance.now() - started;
    expect(maxGap).toBeLessThan(whole / 4);
  }, 60_000);
});
