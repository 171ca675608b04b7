// Every sampling field end to end through engine.generate on stories260K (issue #4 item 9), each checked
// against an independent oracle: the model's raw logits from Model.evaluate, processed in TS with vLLM's
// formulas (float64) and decoded step by step. Every test also shows the field matters: the same request
// without it gives other tokens (or tokens the oracle forbids).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine, type GenerateEvent, type GenerateRequest, Model } from '../../lib/index.js';
import { collect, prompts } from '../helpers/engine-run.js';
import { stories260K } from '../helpers/shared.js';

let model: Model;
let engine: Engine;
const V = 512;

beforeAll(async () => {
  model = await Model.load(stories260K);
  engine = await Engine.create(model, { kvCacheMemory: 8 << 20, threads: 1 });
});

afterAll(async () => {
  await engine.close();
});

const prompt = [1, 403, 407, 261, 378]; // "Once upon a time"

// The raw logits predicting the token after `tokens` (float64 copy, free to modify).
async function nextRow(tokens: readonly number[]): Promise<Float64Array> {
  const logits = await model.evaluate(tokens, { threads: 1 });
  return Float64Array.from(logits.subarray((tokens.length - 1) * V, tokens.length * V));
}

function argmax(row: ArrayLike<number>): number {
  let best = 0;
  for (let i = 1; i < row.length; i++) if (row[i]! > row[best]!) best = i; // first maximum wins
  return best;
}

function logSoftmax(row: ArrayLike<number>): Float64Array {
  let max = -Infinity;
  for (let i = 0; i < row.length; i++) max = Math.max(max, row[i]!);
  let sum = 0;
  for (let i = 0; i < row.length; i++) sum += Math.exp(row[i]! - max);
  const lse = max + Math.log(sum);
  return Float64Array.from(row, (v) => v - lse);
}

// Greedy decoding of `steps` tokens where `process` edits each step's raw logits in place.
type Process = (row: Float64Array, output: readonly number[]) => void;
async function greedyOracle(promptTokens: readonly number[], steps: number, process: Process): Promise<number[]> {
  const out: number[] = [];
  for (let s = 0; s < steps; s++) {
    const row = await nextRow([...promptTokens, ...out]);
    process(row, out);
    out.push(argmax(row));
  }
  return out;
}

const tokensOf = async (request: GenerateRequest): Promise<number[]> => (await collect(engine, request)).tokens;

// vLLM's apply_penalties: repetition over prompt ∪ output (divide positive, multiply non-positive),
// then frequency × output count, then presence once per distinct output token.
function penalize(row: Float64Array, promptTokens: readonly number[], output: readonly number[], rep: number, freq: number, pres: number): void {
  if (rep !== 1) {
    for (const t of new Set([...promptTokens, ...output])) row[t] = row[t]! > 0 ? row[t]! / rep : row[t]! * rep;
  }
  const counts = new Map<number, number>();
  for (const t of output) counts.set(t, (counts.get(t) ?? 0) + 1);
  for (const [t, c] of counts) row[t] = row[t]! - freq * c - pres;
}

const withBias = (bias: Record<number, number>): Process => (row) => {
  for (const [t, b] of Object.entries(bias)) row[Number(t)] = row[Number(t)]! + b;
};

describe('logitBias, allowedTokenIds, badWordsTokenIds (greedy, 10 steps)', () => {
  it('logitBias: each token is the argmax of logits + bias', async () => {
    const plain = await tokensOf({ promptTokens: prompt, maxTokens: 10, temperature: 0 });
    // Ban the unbiased first choice, push a mid-ranked token up by a finite amount.
    const bias = { [plain[0]!]: -100, 300: 9, 376: 4 };
    const got = await tokensOf({ promptTokens: prompt, maxTokens: 10, temperature: 0, logitBias: bias });
    expect(got).toEqual(await greedyOracle(prompt, 10, withBias(bias)));
    expect(got).not.toEqual(plain);
    expect(got).not.toContain(plain[0]);
  });

  it('logitBias as typed arrays: the same tokens and logprobs as the object, a repeated id keeps its last bias, a whole vocabulary biased', async () => {
    const plain = await tokensOf({ promptTokens: prompt, maxTokens: 10, temperature: 0 });
    const bias = { [plain[0]!]: -100, 300: 9, 376: 4 };
    const typed = { ids: Int32Array.of(376, plain[0]!, 300, 376), bias: Float32Array.of(-50, -100, 9, 4) };
    const sampled = (logitBias: GenerateRequest['logitBias']) => collect(engine, { promptTokens: prompt, maxTokens: 10, temperature: 0.8, seed: 3, logprobs: 2, logitBias });
    const [a, b] = [await sampled(bias), await sampled(typed)];
    expect(b.tokens).toEqual(a.tokens);
    expect(b.events.map((e) => e.logprobs)).toEqual(a.events.map((e) => e.logprobs));
    expect(b.tokens).not.toEqual((await sampled(undefined)).tokens);
    // Every id of the vocabulary biased (what a 262k-entry logit_bias is for a large model).
    const ramp = Object.fromEntries(Array.from({ length: V }, (_, t) => [t, ((t * 37) % 23) - 11]));
    const whole = { ids: Int32Array.from({ length: V }, (_, t) => t), bias: Float32Array.from({ length: V }, (_, t) => ramp[t]!) };
    const got = await tokensOf({ promptTokens: prompt, maxTokens: 10, temperature: 0, logitBias: whole });
    expect(got).toEqual(await tokensOf({ promptTokens: prompt, maxTokens: 10, temperature: 0, logitBias: ramp }));
    expect(got).toEqual(await greedyOracle(prompt, 10, withBias(ramp)));
    expect(got).not.toEqual(plain);
    // A bias past float32's range is clamped like any other (to +-100), not an error.
    expect(await tokensOf({ promptTokens: prompt, maxTokens: 3, temperature: 0, logitBias: { 300: 1e300 } })).toEqual([300, 300, 300]);
  });

  it('logitBias typed arrays of the wrong type or lengths are errors with a code, from the engine and from the addon', async () => {
    const bad = [
      { ids: [1, 2], bias: Float32Array.of(1, 2) },
      { ids: Int32Array.of(1, 2), bias: Float64Array.of(1, 2) },
      { ids: Int32Array.of(1, 2), bias: Float32Array.of(1) },
      { ids: Int32Array.of(-1), bias: Float32Array.of(1) },
      { ids: Int32Array.of(1), bias: Float32Array.of(Number.NaN) },
    ];
    for (const logitBias of bad) {
      expect(() => engine.generate({ promptTokens: prompt, maxTokens: 1, logitBias: logitBias as never }), JSON.stringify(logitBias))
        .toThrow(expect.objectContaining({ code: 'invalid_argument', message: expect.stringMatching(/^Expected .*logitBias/) }));
    }
    const native = await model.addon.createEngine(model.handle, { kvCacheMemory: 1 << 20, maxNumSeqs: 1 }, () => {});
    try {
      const submit = (logitBias: unknown) => () => native.submit({ id: 1, promptTokens: Int32Array.from(prompt), maxTokens: 1, logitBias: logitBias as never });
      expect(submit([[1, 2]])).toThrow(expect.objectContaining({ code: 'invalid_argument', message: 'Expected logitBias as { ids: Int32Array, bias: Float32Array }' }));
      expect(submit({ ids: [1], bias: Float32Array.of(1) })).toThrow(expect.objectContaining({ code: 'invalid_argument', message: 'Expected an Int32Array for logitBias.ids' }));
      expect(submit({ ids: Int32Array.of(1), bias: Float64Array.of(1) })).toThrow(expect.objectContaining({ code: 'invalid_argument', message: 'Expected a Float32Array for logitBias.bias' }));
      expect(submit({ ids: Int32Array.of(1, 2), bias: Float32Array.of(1) }))
        .toThrow(expect.objectContaining({ code: 'invalid_argument', message: 'Expected logitBias.ids and logitBias.bias of equal length, got 2 and 1' }));
      expect(submit({ ids: Int32Array.of(1), bias: Float32Array.of(Number.POSITIVE_INFINITY) })).toThrow(expect.objectContaining({ code: 'invalid_argument' }));
    } finally {
      await native.close();
    }
  });

  it('allowedTokenIds: greedy picks the argmax within the set; sampled tokens never leave it', async () => {
    const allowed = [261, 286, 300, 322, 376, 383, 403, 407, 426, 432];
    const mask: Process = (row) => {
      const keep = new Set(allowed);
      for (let t = 0; t < V; t++) if (!keep.has(t)) row[t] = -Infinity;
    };
    const plain = await tokensOf({ promptTokens: prompt, maxTokens: 10, temperature: 0 });
    const got = await tokensOf({ promptTokens: prompt, maxTokens: 10, temperature: 0, allowedTokenIds: allowed });
    expect(got).toEqual(await greedyOracle(prompt, 10, mask));
    expect(got).not.toEqual(plain);
    const sampled = await collect(engine, { promptTokens: prompt, n: 4, maxTokens: 16, temperature: 1.5, seed: 9, allowedTokenIds: allowed });
    expect(sampled.tokens.length).toBe(64);
    for (const t of sampled.tokens) expect(allowed).toContain(t);
    const free = await collect(engine, { promptTokens: prompt, n: 4, maxTokens: 16, temperature: 1.5, seed: 9 });
    expect(free.tokens.some((t) => !allowed.includes(t))).toBe(true);
  });

  it('badWordsTokenIds: a single-token word never appears; a two-token word never completes', async () => {
    const plain = await tokensOf({ promptTokens: prompt, maxTokens: 10, temperature: 0 });
    // plain = ", there was a little girl ..." : ban the token " there" outright, and " a" right after " was".
    const single = [plain[1]!];
    const pair = [plain[2]!, plain[3]!];
    const words = [single, pair];
    const banned: Process = (row, out) => {
      for (const w of words) {
        const prefix = w.slice(0, -1);
        const tail = out.slice(out.length - prefix.length);
        if (prefix.length <= out.length && prefix.every((t, i) => tail[i] === t)) row[w[w.length - 1]!] = -Infinity;
      }
    };
    const got = await tokensOf({ promptTokens: prompt, maxTokens: 10, temperature: 0, badWordsTokenIds: words });
    expect(got).toEqual(await greedyOracle(prompt, 10, banned));
    expect(got).not.toContain(single[0]);
    for (let i = 1; i < got.length; i++) expect([got[i - 1], got[i]]).not.toEqual(pair);
    expect(got).not.toEqual(plain);
    // The pair alone: its first token is still allowed, only the completion is banned.
    const pairOnly = await tokensOf({ promptTokens: prompt, maxTokens: 10, temperature: 0, badWordsTokenIds: [pair] });
    expect(pairOnly.slice(0, 3)).toEqual(plain.slice(0, 3));
    expect(pairOnly[3]).not.toBe(pair[1]);
  });
});

describe('penalties equal vLLM\'s formula on the raw logits (greedy, 12 steps)', () => {
  // '.' pushed up so it would repeat; the penalties must wear it down exactly as vLLM does. (Each case's
  // smallest top-1/top-2 gap on the oracle is ≥ 0.04, far above float noise.)
  const bias = { 426: 8 };
  const cases: [string, Partial<GenerateRequest>, number, number, number][] = [
    ['repetitionPenalty', { repetitionPenalty: 1.6 }, 1.6, 0, 0],
    ['frequencyPenalty', { frequencyPenalty: 1.5 }, 1, 1.5, 0],
    ['presencePenalty', { presencePenalty: 2 }, 1, 0, 2],
    ['negative frequencyPenalty', { frequencyPenalty: -0.7 }, 1, -0.7, 0],
    ['all three', { repetitionPenalty: 1.3, frequencyPenalty: 0.4, presencePenalty: 0.9 }, 1.3, 0.4, 0.9],
  ];
  for (const [name, fields, rep, freq, pres] of cases) {
    it(name, async () => {
      const base: GenerateRequest = { promptTokens: prompt, maxTokens: 12, temperature: 0, logitBias: bias };
      const got = await tokensOf({ ...base, ...fields });
      const oracle = await greedyOracle(prompt, 12, (row, out) => {
        withBias(bias)(row, out);
        penalize(row, prompt, out, rep, freq, pres);
      });
      expect(got).toEqual(oracle);
      expect(got).not.toEqual(await tokensOf(base));
    });
  }

  it('repetitionPenalty counts prompt tokens, frequency/presence do not', async () => {
    // The greedy continuation of "Once upon a time, there was" is " a", a prompt token.
    const p = [...prompt, 432, 383, 286];
    const plain = await tokensOf({ promptTokens: p, maxTokens: 1, temperature: 0 });
    expect(p).toContain(plain[0]);
    const row = await nextRow(p);
    penalize(row, p, [], 3, 0, 0);
    const rep = await tokensOf({ promptTokens: p, maxTokens: 1, temperature: 0, repetitionPenalty: 3 });
    expect(rep).toEqual([argmax(row)]);
    expect(rep).not.toEqual(plain);
    expect(await tokensOf({ promptTokens: p, maxTokens: 1, temperature: 0, frequencyPenalty: 2, presencePenalty: 2 })).toEqual(plain);
  });
});

// The tokens a truncation keeps, from probabilities p = softmax(row / T); a little slack at the edges
// so float32-vs-float64 rounding cannot flip a boundary token.
type Keep = (probs: Float64Array, row: Float64Array) => Set<number>;
const keepTopK = (k: number): Keep => (_p, row) => {
  const kth = [...row].sort((a, b) => b - a)[k - 1]!;
  const out = new Set<number>();
  for (let t = 0; t < V; t++) if (row[t]! >= kth) out.add(t); // ties with the k-th are kept
  return out;
};
const keepMinP = (m: number): Keep => (p) => {
  const max = Math.max(...p);
  const out = new Set<number>();
  for (let t = 0; t < V; t++) if (p[t]! >= m * max * (1 - 1e-4)) out.add(t);
  return out;
};
const keepTopP = (q: number): Keep => (p) => {
  // vLLM masks a token when the mass of the tokens ranked above it already reaches q.
  const order = [...p.keys()].sort((a, b) => p[b]! - p[a]!);
  const out = new Set<number>();
  let above = 0;
  for (const t of order) {
    if (above >= q + 1e-4) break;
    out.add(t);
    above += p[t]!;
  }
  return out;
};

// Replays each choice step by step and counts the tokens outside the kept set.
async function outsideCount(events: GenerateEvent[], n: number, temperature: number, keep: Keep): Promise<{ outside: number; draws: number }> {
  const choices = Array.from({ length: n }, () => [] as number[]);
  for (const ev of events) choices[ev.index]!.push(...ev.tokenIds);
  let outside = 0;
  let draws = 0;
  for (const out of choices) {
    for (let s = 0; s < out.length; s++) {
      const row = await nextRow([...prompt, ...out.slice(0, s)]);
      const probs = logSoftmax(row.map((v) => v / temperature)).map(Math.exp);
      if (!keep(probs, row).has(out[s]!)) outside++;
      draws++;
    }
  }
  return { outside, draws };
}

describe('truncation: topK, topP, minP', () => {
  it('topK 1 at temperature 1 equals greedy; without it the same seed does not', async () => {
    const greedy = await tokensOf({ promptTokens: prompt, maxTokens: 24, temperature: 0 });
    for (const seed of [1, 2, 3]) {
      expect(await tokensOf({ promptTokens: prompt, maxTokens: 24, temperature: 1, topK: 1, seed })).toEqual(greedy);
    }
    const free = await Promise.all([1, 2, 3].map((seed) => tokensOf({ promptTokens: prompt, maxTokens: 24, temperature: 1, seed })));
    expect(free.some((f) => f.join() !== greedy.join())).toBe(true);
  });

  const T = 2; // the engine's maximum (vLLM: temperature must be in [0, 2])
  const n = 6;
  const steps = 8;
  const cases: [string, Partial<GenerateRequest>, Keep][] = [
    ['topK 3', { topK: 3 }, keepTopK(3)],
    ['topP 0.6', { topP: 0.6 }, keepTopP(0.6)],
    ['minP 0.2', { minP: 0.2 }, keepMinP(0.2)],
  ];
  for (const [name, fields, keep] of cases) {
    it(`${name}: every sampled token is in the kept set of softmax(logits / T); without it some are not`, async () => {
      const base: GenerateRequest = { promptTokens: prompt, n, maxTokens: steps, temperature: T, seed: 21, ignoreEos: true };
      const truncated = await outsideCount((await collect(engine, { ...base, ...fields })).events, n, T, keep);
      expect(truncated).toEqual({ outside: 0, draws: n * steps });
      const free = await outsideCount((await collect(engine, base)).events, n, T, keep);
      expect(free.outside).toBeGreaterThan(0);
    });
  }
});

describe('temperature', () => {
  // A random prompt gives a flat enough first-token distribution for the temperature to show.
  const p = prompts(1, 8, 8, V, 5)[0]!;

  async function draws(temperature: number): Promise<number[]> {
    const out: number[] = [];
    for (let seed = 0; seed < 10; seed++) {
      out.push(...(await collect(engine, { promptTokens: p, n: 50, maxTokens: 1, temperature, seed })).tokens);
    }
    return out;
  }

  const entropy = (tokens: number[]): number => {
    const counts = new Map<number, number>();
    for (const t of tokens) counts.set(t, (counts.get(t) ?? 0) + 1);
    let h = 0;
    for (const c of counts.values()) h -= (c / tokens.length) * Math.log(c / tokens.length);
    return h;
  };

  it('500 first-token draws with the same seeds: entropy grows with temperature, the top token, ranks 2-10 and the tail drawn at softmax(logits / T)', async () => {
    const row = await nextRow(p);
    const byRank = [...row.keys()].sort((a, b) => row[b]! - row[a]!);
    // three buckets by rank under the model: a sampler that never draws the tail (or favours the head)
    // leaves some bucket far outside its binomial bounds
    const buckets: [string, Set<number>][] = [
      ['top token', new Set(byRank.slice(0, 1))],
      ['ranks 2-10', new Set(byRank.slice(1, 10))],
      ['ranks 11+', new Set(byRank.slice(10))],
    ];
    const hs: number[] = [];
    for (const T of [0.3, 1, 2]) {
      const d = await draws(T);
      expect(d.length).toBe(500);
      hs.push(entropy(d));
      const probs = logSoftmax(row.map((v) => v / T)).map(Math.exp);
      for (const [name, ids] of buckets) {
        const pBucket = [...ids].reduce((sum, id) => sum + probs[id]!, 0);
        const share = d.filter((t) => ids.has(t)).length / d.length;
        const sigma = Math.sqrt((pBucket * (1 - pBucket)) / d.length);
        expect(Math.abs(share - pBucket), `T=${T} ${name}: share ${share} vs p ${pBucket}`).toBeLessThanOrEqual(5 * sigma + 0.01);
      }
    }
    expect(hs[0]!).toBeLessThan(hs[1]!);
    expect(hs[1]!).toBeLessThan(hs[2]!);
  });
});

describe('logprobs of sampled tokens', () => {
  it('equal log_softmax((logits + bias) / T) at each generated position within 1e-4, with top-N and ranks', async () => {
    const T = 0.7;
    const bias = { 300: 3, 426: -2 };
    const events = (await collect(engine, { promptTokens: prompt, maxTokens: 8, temperature: T, seed: 4, logitBias: bias, logprobs: 3, ignoreEos: true })).events;
    const tokens = events.flatMap((e) => e.tokenIds);
    const lp = events.flatMap((e) => e.logprobs ?? []);
    expect(lp.length).toBe(8);
    for (let s = 0; s < 8; s++) {
      const row = await nextRow([...prompt, ...tokens.slice(0, s)]);
      withBias(bias)(row, []);
      const ls = logSoftmax(row.map((v) => v / T));
      const e = lp[s]!;
      expect(e.token).toBe(tokens[s]);
      expect(Math.abs(e.logprob - ls[e.token]!)).toBeLessThan(1e-4);
      expect(e.rank).toBe([...ls].filter((v) => v > ls[e.token]!).length + 1);
      const best = [...ls.keys()].sort((a, b) => ls[b]! - ls[a]!).slice(0, 3);
      expect(e.top.map((t) => t.token)).toEqual(best);
      for (const t of e.top) expect(Math.abs(t.logprob - ls[t.token]!)).toBeLessThan(1e-4);
    }
  });

  it('logprobs: true gives the chosen token only; omitted gives none', async () => {
    const on = await collect(engine, { promptTokens: prompt, maxTokens: 3, temperature: 0, logprobs: true });
    const lp = on.events.flatMap((e) => e.logprobs ?? []);
    expect(lp.map((e) => e.token)).toEqual(on.tokens);
    for (const e of lp) expect(e.top).toEqual([]);
    const off = await collect(engine, { promptTokens: prompt, maxTokens: 3, temperature: 0 });
    expect(off.events.every((e) => e.logprobs === undefined || e.logprobs.length === 0)).toBe(true);
  });
});
