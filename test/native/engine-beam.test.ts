// Beam search in the engine (vLLM's use_beam_search) against an oracle written here from vLLM's
// description alone (docs/architecture.md#beam-search): every live beam expands into its top 2·width tokens
// of log_softmax(logits / temperature) (plain log_softmax at temperature 0), EOS candidates complete, the
// best `width` others by cum / len^length_penalty live on; the answer is the best `width` of completed ∪
// live. Logits come from Model.evaluate (no KV cache, no batching), so the oracle shares nothing with the
// engine's forward pass, scheduler or beam bookkeeping.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine, type GenerateEvent, type GenerateRequest, Model } from '../../lib/index.js';
import { prompts } from '../helpers/engine-run.js';
import { stories260K } from '../helpers/shared.js';

let model: Model;
let engine: Engine;
let eos: Set<number>;

beforeAll(async () => {
  model = await Model.load(stories260K);
  engine = await Engine.create(model, { kvCacheMemory: 4 << 20, threads: 1 });
  eos = new Set([model.info.eosTokenId!, ...model.info.eotTokenIds]);
});

afterAll(async () => {
  await engine.close();
});

interface Beam {
  tokens: number[];
  cum: number;
  eos: boolean;
}

interface Options {
  width: number;
  maxTokens: number;
  lengthPenalty?: number;
  temperature?: number;
  ignoreEos?: boolean;
  includeStop?: boolean;
}

const rowCache = new Map<string, Float64Array>();

/** log_softmax of the logits after `tokens` (the last row of evaluate), in double precision. */
async function logSoftmax(tokens: number[], temperature: number): Promise<Float64Array> {
  const key = `${temperature}|${tokens.join(',')}`;
  const hit = rowCache.get(key);
  if (hit) return hit;
  const logits = await model.evaluate(tokens, { threads: 1 });
  const v = model.info.vocabSize;
  const row = new Float64Array(v);
  for (let i = 0; i < v; i++) row[i] = logits[(tokens.length - 1) * v + i]! / (temperature > 0 ? temperature : 1);
  let max = -Infinity;
  for (const x of row) max = Math.max(max, x);
  let sum = 0;
  for (const x of row) sum += Math.exp(x - max);
  const lse = max + Math.log(sum);
  for (let i = 0; i < v; i++) row[i] = row[i]! - lse;
  rowCache.set(key, row);
  return row;
}

/** The k best token ids of a row, largest first, ties to the lower id. */
function topK(row: Float64Array, k: number): number[] {
  const ids = Array.from(row.keys());
  ids.sort((a, b) => row[b]! - row[a]! || a - b);
  return ids.slice(0, k);
}

function score(prompt: number[], b: Beam, o: Options): number {
  // length = prompt + output, minus a trailing EOS kept in the tokens
  const len = prompt.length + b.tokens.length - (b.eos && o.includeStop ? 1 : 0);
  return b.cum / Math.pow(len, o.lengthPenalty ?? 1);
}

function byScore(prompt: number[], beams: Beam[], o: Options): Beam[] {
  return beams
    .map((b, i) => ({ b, i, s: score(prompt, b, o) }))
    .sort((x, y) => y.s - x.s || x.i - y.i)
    .map((x) => x.b);
}

async function oracle(prompt: number[], o: Options): Promise<Beam[]> {
  let live: Beam[] = [{ tokens: [], cum: 0, eos: false }];
  const done: Beam[] = [];
  for (let step = 0; step < o.maxTokens && live.length > 0; step++) {
    const next: Beam[] = [];
    for (const b of live) {
      const row = await logSoftmax([...prompt, ...b.tokens], o.temperature ?? 1);
      for (const t of topK(row, Math.min(2 * o.width, row.length))) {
        const cum = b.cum + row[t]!;
        if (!o.ignoreEos && eos.has(t)) done.push({ tokens: o.includeStop ? [...b.tokens, t] : [...b.tokens], cum, eos: true });
        else next.push({ tokens: [...b.tokens, t], cum, eos: false });
      }
    }
    live = byScore(prompt, next, o).slice(0, o.width);
  }
  return byScore(prompt, [...done, ...live], o).slice(0, o.width);
}

function request(prompt: number[], o: Options): GenerateRequest {
  return {
    promptTokens: prompt,
    n: o.width,
    maxTokens: o.maxTokens,
    useBeamSearch: true,
    lengthPenalty: o.lengthPenalty,
    temperature: o.temperature ?? 1,
    ignoreEos: o.ignoreEos,
    includeStopStrInOutput: o.includeStop,
  };
}

async function collect(req: GenerateRequest, signal?: AbortSignal): Promise<GenerateEvent[]> {
  const events: GenerateEvent[] = [];
  for await (const ev of engine.generate(req, { signal })) events.push(ev);
  return events;
}

async function beams(prompt: number[], o: Options): Promise<GenerateEvent[]> {
  const events = await collect(request(prompt, o));
  // the whole result at the end: one finish event per choice, index = rank, the last one done
  expect(events.map((e) => e.index)).toEqual(events.map((_, i) => i));
  for (const e of events) expect(e.finishReason === 'stop' || e.finishReason === 'length').toBe(true);
  expect(events.filter((e) => e.done).length).toBe(1);
  expect(events[events.length - 1]!.done).toBe(true);
  return events;
}

function expectSame(got: GenerateEvent[], want: Beam[]): void {
  expect(got.map((e) => e.tokenIds)).toEqual(want.map((b) => b.tokens));
  expect(got.map((e) => e.finishReason)).toEqual(want.map((b) => (b.eos ? 'stop' : 'length')));
  // 1e-4 for the short searches; the engine's cached-KV logits differ from evaluate()'s by ~1e-5 per
  // token, and by more in the far tail of the distribution (EOS here), so long beams and tail tokens get
  // a proportional allowance
  for (let i = 0; i < want.length; i++) {
    const tol = Math.max(1e-4, 2e-5 * want[i]!.tokens.length, 1e-4 * Math.abs(want[i]!.cum));
    expect(Math.abs(got[i]!.cumLogprob! - want[i]!.cum)).toBeLessThanOrEqual(tol);
  }
}

const story = (): number[] => model.tokenize('Once upon a time, there was a little girl named');
const randomPrompts = (): number[][] => prompts(3, 4, 30, 512, 91);

describe('beam search matches an independent oracle', () => {
  for (const width of [1, 2, 3]) {
    for (const maxTokens of [2, 3]) {
      it(`width ${width}, ${maxTokens} tokens`, async () => {
        for (const prompt of [story(), ...randomPrompts()]) {
          const o = { width, maxTokens };
          expectSame(await beams(prompt, o), await oracle(prompt, o));
        }
      });
    }
  }

  it('temperature 0 scores the plain log_softmax, temperature 0.5 the sharpened one', async () => {
    for (const temperature of [0, 0.5]) {
      const o = { width: 3, maxTokens: 4, temperature };
      expectSame(await beams(story(), o), await oracle(story(), o));
    }
    const a = await beams(story(), { width: 2, maxTokens: 3, temperature: 0 });
    const b = await beams(story(), { width: 2, maxTokens: 3, temperature: 0.5 });
    expect(a[0]!.cumLogprob).not.toBeCloseTo(b[0]!.cumLogprob!, 3);
  });

  it('longer searches (width 4, 12 tokens) still match', async () => {
    const o = { width: 4, maxTokens: 12 };
    expectSame(await beams(story(), o), await oracle(story(), o));
  });

  it('one token: the best beam is the argmax of the whole vocabulary at every width', async () => {
    // Beam search guarantees the optimum only where its beams cover every sequence; for one token they
    // do (the top 2w candidates include the best one).
    for (const width of [1, 2, 3]) {
      const row = await logSoftmax(story(), 1);
      const best = topK(row, 1)[0]!;
      const got = await beams(story(), { width, maxTokens: 1, ignoreEos: true });
      expect(got[0]!.tokenIds).toEqual([best]);
      expect(Math.abs(got[0]!.cumLogprob! - row[best]!)).toBeLessThanOrEqual(1e-4);
    }
  });
});

describe('beam search as wide as the vocabulary', () => {
  // Width V keeps every sequence alive, so two tokens of beam search are the exhaustive search over all
  // V² sequences: its V beams are the V best of them, in order.
  let full: Engine;
  beforeAll(async () => {
    full = await Engine.create(model, { kvCacheMemory: 16 << 20, threads: 1, maxNumSeqs: model.info.vocabSize });
  });
  afterAll(async () => {
    await full.close();
  });

  it('two tokens at width V are the V best of all V² sequences', async () => {
    const prompt = story();
    const v = model.info.vocabSize;
    const first = await logSoftmax(prompt, 1);
    // every sequence's cum logprob (ignore_eos: EOS is an ordinary token, all sequences have length 2)
    const cums = new Float64Array(v * v);
    for (let a = 0; a < v; a++) {
      const second = await logSoftmax([...prompt, a], 1);
      for (let b = 0; b < v; b++) cums[a * v + b] = first[a]! + second[b]!;
    }
    const order = topK(cums, v);
    const events: GenerateEvent[] = [];
    for await (const ev of full.generate(request(prompt, { width: v, maxTokens: 2, ignoreEos: true }))) events.push(ev);
    expect(events.length).toBe(v);
    // rank by rank the same scores (near-equal sequences may swap places: the engine's cached-KV logits
    // differ from evaluate()'s by ~1e-5), and each beam is the sequence its score says
    for (let i = 0; i < v; i++) {
      const [x, y] = events[i]!.tokenIds;
      expect(events[i]!.tokenIds.length).toBe(2);
      expect(Math.abs(events[i]!.cumLogprob! - cums[order[i]!]!), `rank ${i}`).toBeLessThanOrEqual(1e-4);
      expect(Math.abs(events[i]!.cumLogprob! - cums[x! * v + y!]!), `rank ${i}: ${x}, ${y}`).toBeLessThanOrEqual(1e-4);
    }
    const s = full.stats();
    expect(s.kvBlocksFree).toBe(s.kvBlocksTotal);
  });
});

describe('beam search options', () => {
  // stories260K all but never predicts EOS (rank ~300-500 of 512), so EOS candidates need a wide beam:
  // at width 200 the top 400 of a row after '.' include it. Their logprob is so low that they only rank
  // first under a negative length_penalty (score = cum · len^30 punishes the longer, live beams).
  const favourShort = -30;
  let wide: Engine;
  const endOfStory = (): number[] => model.tokenize('Lily and Ben played all day. They were tired and happy.');
  const wideBeams = async (o: Options): Promise<GenerateEvent[]> => {
    const events: GenerateEvent[] = [];
    for await (const ev of wide.generate(request(endOfStory(), o))) events.push(ev);
    expect(events.map((e) => e.index)).toEqual(events.map((_, i) => i));
    return events;
  };
  beforeAll(async () => {
    wide = await Engine.create(model, { kvCacheMemory: 16 << 20, threads: 1, maxNumSeqs: 256 });
  });
  afterAll(async () => {
    await wide.close();
  });

  it('EOS beams finish "stop" without the EOS token; include_stop_str_in_output keeps it', async () => {
    const o = { width: 200, maxTokens: 2, lengthPenalty: favourShort };
    const plain = await wideBeams(o);
    expectSame(plain, await oracle(endOfStory(), o));
    expect(plain.filter((e) => e.finishReason === 'stop').length).toBeGreaterThan(0);
    for (const e of plain) expect(e.tokenIds.some((t) => eos.has(t))).toBe(false);
    const kept = await wideBeams({ ...o, includeStop: true });
    expectSame(kept, await oracle(endOfStory(), { ...o, includeStop: true }));
    const stops = kept.filter((x) => x.finishReason === 'stop');
    expect(stops.length).toBeGreaterThan(0);
    for (const e of stops) {
      expect(eos.has(e.tokenIds[e.tokenIds.length - 1]!)).toBe(true);
      expect(e.text).toBe(model.detokenize(e.tokenIds.slice(0, -1)));
    }
    const s = wide.stats();
    expect(s.kvBlocksFree).toBe(s.kvBlocksTotal);
  });

  it('results are sorted by cum_logprob / len^length_penalty, and the penalty changes the ranking', async () => {
    const prompt = endOfStory();
    const results = new Map<number, GenerateEvent[]>();
    for (const lengthPenalty of [0, 1, favourShort]) {
      const o = { width: 200, maxTokens: 3, lengthPenalty };
      const got = await wideBeams(o);
      expectSame(got, await oracle(prompt, o));
      const len = (e: GenerateEvent): number => prompt.length + e.tokenIds.length;
      const scores = got.map((e) => e.cumLogprob! / Math.pow(len(e), lengthPenalty));
      for (let i = 1; i < scores.length; i++) expect(scores[i]!).toBeLessThanOrEqual(scores[i - 1]! + 1e-9);
      results.set(lengthPenalty, got);
    }
    // all beams of one length rank alike under any exponent; EOS beams (shorter) move to the front
    const order = (lp: number): string[] => results.get(lp)!.map((e) => `${e.finishReason}:${e.tokenIds.join(',')}`);
    expect(order(0)).toEqual(order(1));
    expect(order(1)).not.toEqual(order(favourShort));
    expect(results.get(1)!.every((e) => e.finishReason === 'length')).toBe(true);
    expect(results.get(favourShort)!.slice(0, 5).some((e) => e.finishReason === 'stop')).toBe(true);
    // length_penalty 0 ranks by cum_logprob alone
    const cums = results.get(0)!.map((e) => e.cumLogprob!);
    for (let i = 1; i < cums.length; i++) expect(cums[i]!).toBeLessThanOrEqual(cums[i - 1]! + 1e-9);
  });

  it('ignore_eos: EOS is an ordinary candidate, every beam runs to max_tokens', async () => {
    const o = { width: 200, maxTokens: 2, ignoreEos: true, lengthPenalty: favourShort };
    const got = await wideBeams(o);
    expectSame(got, await oracle(endOfStory(), o));
    for (const e of got) {
      expect(e.finishReason).toBe('length');
      expect(e.tokenIds.length).toBe(2);
      expect(e.usage).toMatchObject({ promptTokens: endOfStory().length, completionTokens: 2 });
    }
  });

  it('width 12 (above vLLM\'s n ≤ 10) works and matches the oracle', async () => {
    const o = { width: 12, maxTokens: 3 };
    const got = await beams(story(), o);
    expect(got.length).toBe(12);
    expectSame(got, await oracle(story(), o));
  });

  it('the context length caps the search; every block is back in the pool afterwards', async () => {
    const small = await Engine.create(model, { kvCacheMemory: 4 << 20, threads: 1, maxModelLen: story().length + 5 });
    try {
      const events: GenerateEvent[] = [];
      for await (const ev of small.generate({ promptTokens: story(), n: 3, useBeamSearch: true, temperature: 1 })) events.push(ev);
      expectSame(events, await oracle(story(), { width: 3, maxTokens: 5 }));
      expect(small.stats().kvBlocksFree).toBe(small.stats().kvBlocksTotal);
    } finally {
      await small.close();
    }
  });
});

describe('beam search in the running engine', () => {
  it('batched with 8 ordinary requests gives the same beams as alone; the pool is full afterwards', async () => {
    const prompt = story();
    const o = { width: 3, maxTokens: 16 };
    const alone = await beams(prompt, o);
    const others = prompts(8, 5, 60, 512, 7).map((p, i) =>
      collect({ promptTokens: p, maxTokens: 20 + i, temperature: 1, seed: i, ignoreEos: true }),
    );
    const [together] = await Promise.all([collect(request(prompt, o)), ...others]);
    expect(together!.map((e) => e.tokenIds)).toEqual(alone.map((e) => e.tokenIds));
    // the batch's shape moves logits in the last float bits, never the beams
    for (let i = 0; i < alone.length; i++) expect(Math.abs(together![i]!.cumLogprob! - alone[i]!.cumLogprob!)).toBeLessThan(1e-5);
    const s = engine.stats();
    expect(s.kvBlocksFree).toBe(s.kvBlocksTotal);
  });

  it('computes the prompt once and shares it copy-on-write between beams', async () => {
    const prompt = prompts(1, 100, 100, 512, 3)[0]!;
    const before = engine.stats().tokensComputed;
    await beams(prompt, { width: 4, maxTokens: 6 });
    // 100 prompt positions once, then at most width decode positions per later step
    expect(engine.stats().tokensComputed - before).toBeLessThanOrEqual(100 + 4 * 5);
  });

  it('abort mid-search ends every choice with abort and frees every block', async () => {
    const controller = new AbortController();
    const pending = collect(request(story(), { width: 6, maxTokens: 400, ignoreEos: true }), controller.signal);
    // Beam search reports nothing before it ends: an ordinary request submitted after it is the clock.
    // Each of its tokens comes from a step that also ran the search (admitted no later), so after 10 of
    // them the search is 10 steps into its 400.
    let steps = 0;
    for await (const ev of engine.generate({ promptTokens: [1, 403], maxTokens: 400, ignoreEos: true })) {
      steps += ev.tokenIds.length;
      if (steps >= 10) break;
    }
    expect(steps).toBe(10);
    controller.abort();
    const events = await pending;
    expect(events.map((e) => e.finishReason)).toEqual(Array(6).fill('abort'));
    const s = engine.stats(); // current when the abort records arrived
    expect(s.running + s.waiting).toBe(0);
    expect(s.kvBlocksFree).toBe(s.kvBlocksTotal);
  });

  it('preemption recomputes the beams and finds the same result, or fails cleanly; no block leaks', async () => {
    // A pool of 30 blocks (640 bytes of K+V per token): the beams and 6 long ordinary requests cannot all fit.
    const tight = await Engine.create(model, { kvCacheMemory: 30 * 16 * 640, threads: 1, enablePrefixCaching: false });
    try {
      const prompt = story();
      const o = { width: 4, maxTokens: 40, ignoreEos: true };
      const others = prompts(6, 30, 60, 512, 11).map((p, i) =>
        (async () => {
          for await (const _ of tight.generate({ promptTokens: p, maxTokens: 60, temperature: 1, seed: i, ignoreEos: true })) void _;
        })(),
      );
      const events: GenerateEvent[] = [];
      for await (const ev of tight.generate(request(prompt, o))) events.push(ev);
      await Promise.all(others);
      expect(tight.stats().preemptions).toBeGreaterThan(0);
      if (events[0]!.finishReason === 'error') {
        expect(events[0]!.error!.message).toMatch(/KV blocks/);
      } else {
        expectSame(events, await oracle(prompt, o));
      }
      const s = tight.stats();
      expect(s.kvBlocksFree).toBe(s.kvBlocksTotal);
    } finally {
      await tight.close();
    }
  });
});
