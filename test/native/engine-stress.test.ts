// Seeded randomized stress of the engine: random (valid) engine options, many concurrent random requests
// mixing every request feature, random aborts (before submission, at once, after a delay, after some
// tokens), now and then a close() under load, and requests that are invalid on purpose. Contract: a
// request ends with exactly one finish per choice (done on the last event) or fails with a coded error;
// nothing crashes or hangs; afterwards the engine is idle with its KV pool free and still answers
// exactly as a reference engine does; greedy or seeded requests of the mix give the same tokens as the
// same request alone (batch invariance). Then adversarial engine options, each working or refused at
// Engine.create with a coded error.
//
// STRESS_SEEDS=1000 (and STRESS_SEED_BASE) widen the run; STRESS_LOG=1 writes each request to stderr
// before it is submitted (and its time and finish after), so a crash of the worker leaves its case
// behind.
import { writeSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine, type EngineOptions, type GenerateEvent, type GenerateRequest, type Grammar, Model } from '../../lib/index.js';
import { collect, tokensByChoice } from '../helpers/engine-run.js';
import { stories260K } from '../helpers/shared.js';

const SEEDS = Number(process.env.STRESS_SEEDS ?? 8);
const SEED_BASE = Number(process.env.STRESS_SEED_BASE ?? 1);
const LOG = process.env.STRESS_LOG === '1';
const V = 512; // stories260K vocabulary
const BLOCK = 16; // tokens per KV block
const BLOCK_BYTES = 10_240; // 5 layers × 4 KV heads × head dim 8 × 16 tokens × K and V × F16

class Rand {
  #a: number;
  constructor(seed: number) {
    this.#a = seed >>> 0;
  }
  /** mulberry32 */
  f(): number {
    this.#a = (this.#a + 0x6d2b79f5) >>> 0;
    let t = this.#a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.f() * (hi - lo + 1));
  }
  chance(p: number): boolean {
    return this.f() < p;
  }
  pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.f() * xs.length)]!;
  }
  tokens(n: number): number[] {
    return Array.from({ length: n }, () => this.int(3, V - 1));
  }
}

type AbortMode = 'none' | 'before' | 'immediate' | 'delay' | 'tokens';

interface Planned {
  index: number;
  req: GenerateRequest;
  /** Why the request must fail (undefined: valid). */
  invalid?: string;
  abort: AbortMode;
  abortAfter: number; // ms (delay) or token events (tokens)
  startDelay: number; // ms before submitting
  grammarName?: string;
}

interface Outcome {
  threw?: unknown;
  events: GenerateEvent[];
}

interface Config {
  options: EngineOptions;
  maxNumSeqs: number;
  maxNumBatchedTokens: number;
  blocks: number;
  maxModelLen: number;
  maxLogprobs: number;
}

const blocksFor = (tokens: number): number => Math.ceil(tokens / BLOCK);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function engineConfig(r: Rand): Config {
  const maxNumSeqs = r.int(1, 8);
  const blocks = r.pick([r.int(6, 16), r.int(16, 48), r.int(48, 160), 409]);
  const maxNumBatchedTokens = r.pick([r.int(1, 8), r.int(8, 64), r.int(8, 64), 512]);
  const options: EngineOptions = {
    maxNumSeqs,
    maxNumBatchedTokens,
    kvCacheMemory: blocks * BLOCK_BYTES + r.int(0, BLOCK_BYTES - 1),
    schedulingPolicy: r.pick(['fcfs', 'priority'] as const),
    enablePrefixCaching: r.chance(0.6),
    threads: r.chance(0.35) ? 2 : 1, // two threads cost the most on a busy machine (every step syncs them)
  };
  if (r.chance(0.2)) options.maxModelLen = r.int(48, 320);
  if (r.chance(0.15)) options.maxLogprobs = r.pick([-1, 0, 5]);
  if (r.chance(0.3)) options.seed = r.int(0, 1000);
  return { options, maxNumSeqs, maxNumBatchedTokens, blocks, maxModelLen: options.maxModelLen ?? 2048, maxLogprobs: options.maxLogprobs ?? 20 };
}

const STOPS = ['.', ' the', 'Lily', ' and', 'was', 'zq', '!', ' he'];

function planRequest(r: Rand, cfg: Config, index: number, prefixes: number[][], grammars: Map<string, Grammar>): Planned {
  // Prompt: random ids, sometimes behind a shared prefix (prefix-cache hits), sometimes starting with BOS.
  // Every step costs about the same whatever its size: under a budget of a few tokens a step, prompts
  // stay short so that the seed keeps to its time (chunking is exercised all the same).
  const longest = cfg.maxNumBatchedTokens < 8 ? 48 : 200;
  let len = Math.min(longest, r.pick([r.int(1, 8), r.int(1, 40), r.int(20, 120), r.int(100, 200)]));
  let prompt: number[];
  if (r.chance(0.3)) {
    const prefix = r.pick(prefixes);
    prompt = [...prefix, ...r.tokens(Math.max(0, len - prefix.length))];
  } else {
    prompt = r.tokens(len);
  }
  if (r.chance(0.3)) prompt[0] = 1;
  if (prompt.length > longest) prompt = prompt.slice(0, longest);
  if (prompt.length >= cfg.maxModelLen) prompt = prompt.slice(0, cfg.maxModelLen - r.int(1, 16));
  len = prompt.length;
  const room = cfg.maxModelLen - len;
  const req: GenerateRequest = { promptTokens: prompt };
  if (r.chance(0.3)) req.cacheSalt = r.pick(['a', 'b']);
  // An omitted maxTokens runs to the end of the context: only under a short maxModelLen (time).
  if (cfg.maxModelLen > 320 || r.chance(0.8) || room < 1) req.maxTokens = Math.max(1, Math.min(room, r.pick([r.int(1, 4), r.int(1, 24), r.int(16, 64)])));
  const maxTokens = req.maxTokens ?? room;
  const beam = r.chance(0.1);
  if (beam) {
    req.useBeamSearch = true;
    req.n = r.int(1, cfg.maxNumSeqs);
    if (r.chance(0.5)) req.temperature = r.pick([0, 0.5, 1]);
    if (r.chance(0.3)) req.lengthPenalty = r.pick([0, 0.5, 1, 2]);
    if (r.chance(0.3)) req.ignoreEos = true;
    if (r.chance(0.2)) req.includeStopStrInOutput = true;
  } else {
    if (r.chance(0.35)) req.n = r.int(1, cfg.maxNumSeqs);
    if (r.chance(0.45)) {
      req.temperature = 0;
    } else {
      if (r.chance(0.8)) req.temperature = r.pick([0.3, 0.7, 1, 1.5, 2]);
      if (r.chance(0.7)) req.seed = r.int(-1000, 100000);
    }
    if (r.chance(0.3)) req.topK = r.pick([-1, 0, 1, 5, 40]);
    if (r.chance(0.3)) req.topP = r.pick([0.1, 0.5, 0.9, 1]);
    if (r.chance(0.2)) req.minP = r.pick([0, 0.05, 0.3, 1]);
    if (r.chance(0.2)) req.repetitionPenalty = r.pick([0.5, 1, 1.3, 2]);
    if (r.chance(0.2)) req.frequencyPenalty = r.pick([-2, -0.5, 0.5, 2]);
    if (r.chance(0.2)) req.presencePenalty = r.pick([-2, -0.5, 0.5, 2]);
    if (r.chance(0.2)) req.logitBias = Object.fromEntries(Array.from({ length: r.int(1, 4) }, () => [String(r.int(0, V - 1)), r.pick([-100, -5, 5, 100])]));
    if (r.chance(0.08)) req.allowedTokenIds = Array.from({ length: r.int(1, 20) }, () => r.int(0, V - 1));
    if (r.chance(0.08)) req.badWordsTokenIds = Array.from({ length: r.int(1, 3) }, () => r.tokens(r.int(1, 3)));
    const maxTop = cfg.maxLogprobs === -1 ? V : cfg.maxLogprobs;
    if (r.chance(0.3)) req.logprobs = r.pick([true, false, 0, Math.min(1, maxTop), Math.min(5, maxTop), maxTop]);
    if (r.chance(0.25)) req.stop = r.chance(0.5) ? r.pick(STOPS) : [r.pick(STOPS), r.pick(STOPS)];
    if (r.chance(0.2)) req.stopTokenIds = Array.from({ length: r.int(1, 3) }, () => r.int(0, V - 1));
    if (r.chance(0.2)) req.includeStopStrInOutput = true;
    if (r.chance(0.2)) req.minTokens = r.int(0, maxTokens);
    if (r.chance(0.25)) req.ignoreEos = true;
    if (r.chance(0.15)) {
      const max = r.int(1, 6);
      req.repetitionDetection = { maxPatternSize: max, minPatternSize: r.int(0, max), minCount: r.int(2, 5) };
    }
    if (r.chance(0.1)) req.grammar = grammars.get(r.pick([...grammars.keys()]));
    if (req.grammar && r.chance(0.4)) req.grammarAfter = r.pick([' the', '.', 'a']);
    if (r.chance(0.1)) req.skipSpecialTokens = false;
    if (r.chance(0.1)) req.spacesBetweenSpecialTokens = false;
  }
  if (r.chance(0.15)) req.promptLogprobs = r.int(0, Math.min(cfg.maxLogprobs === -1 ? V : cfg.maxLogprobs, 20));
  if (r.chance(0.3)) req.priority = r.int(-3, 3);

  const planned: Planned = { index, req, abort: 'none', abortAfter: 0, startDelay: r.chance(0.4) ? r.int(0, 20) : 0 };
  if (req.grammar) planned.grammarName = [...grammars.entries()].find(([, g]) => g === req.grammar)![0];
  if (r.chance(0.12)) makeInvalid(r, cfg, planned, grammars);
  const roll = r.f();
  if (roll < 0.05) planned.abort = 'before';
  else if (roll < 0.1) planned.abort = 'immediate';
  else if (roll < 0.2) planned.abort = 'delay';
  else if (roll < 0.28) planned.abort = 'tokens';
  planned.abortAfter = planned.abort === 'delay' ? r.int(0, 30) : r.int(0, 6);
  return planned;
}

// Makes the request invalid in one of several ways, each of which must be refused with a coded error.
function makeInvalid(r: Rand, cfg: Config, p: Planned, grammars: Map<string, Grammar>): void {
  const req = p.req;
  const kinds = [
    'temperature', 'topP', 'n', 'promptLogprobs', 'logprobs', 'token', 'maxTokens0', 'minTokens', 'repetition',
    'logitBias', 'stopEmpty', 'beamGrammar', 'allowedEmpty', 'badWords', 'stopTokenNegative', 'context', 'pool',
  ];
  const kind = r.pick(kinds);
  p.invalid = kind;
  const prompt = [...(req.promptTokens as number[])];
  switch (kind) {
    case 'temperature': req.temperature = 2.5; req.useBeamSearch = false; break;
    case 'topP': req.topP = 0; break;
    case 'n': req.n = cfg.maxNumSeqs + 1; break;
    case 'promptLogprobs': req.promptLogprobs = (cfg.maxLogprobs === -1 ? V : cfg.maxLogprobs) + 1; req.useBeamSearch = false; break;
    case 'logprobs':
      if (cfg.maxLogprobs === -1) { req.logprobs = -1 as unknown as number; break; }
      req.logprobs = cfg.maxLogprobs + 1; req.useBeamSearch = false; break;
    case 'token': prompt[r.int(0, prompt.length - 1)] = V + r.int(0, 5); req.promptTokens = prompt; break;
    case 'maxTokens0': req.maxTokens = 0; break;
    case 'minTokens': req.maxTokens = Math.min(req.maxTokens ?? 4, 4); req.minTokens = req.maxTokens + 1; req.useBeamSearch = false; break;
    case 'repetition': req.repetitionDetection = { maxPatternSize: 3, minCount: 1 }; req.useBeamSearch = false; break;
    case 'logitBias': req.logitBias = { [String(V + 7)]: 1 }; req.useBeamSearch = false; break;
    case 'stopEmpty': req.stop = ['']; break;
    case 'beamGrammar': req.useBeamSearch = true; req.grammar = grammars.values().next().value; p.grammarName = 'yesNo'; break;
    case 'allowedEmpty': req.allowedTokenIds = []; req.useBeamSearch = false; break;
    case 'badWords': req.badWordsTokenIds = [[3, V + 1]]; req.useBeamSearch = false; break;
    case 'stopTokenNegative': req.stopTokenIds = [-1]; break;
    case 'context': {
      // prompt + maxTokens beyond the context (or a prompt that fills it)
      if (r.chance(0.5) && cfg.maxModelLen <= 400) {
        req.promptTokens = r.tokens(cfg.maxModelLen + r.int(0, 10));
        delete req.maxTokens;
      } else {
        req.maxTokens = cfg.maxModelLen - prompt.length + 1 + r.int(0, 100);
        delete req.minTokens;
      }
      break;
    }
    case 'pool': {
      // a prompt larger than the whole KV pool (when that is shorter than the context), else too long
      const tokens = cfg.blocks * BLOCK + r.int(1, 40);
      if (tokens < cfg.maxModelLen) req.promptTokens = r.tokens(tokens);
      else req.promptTokens = r.tokens(cfg.maxModelLen + 1);
      req.maxTokens = 2;
      delete req.minTokens;
      break;
    }
  }
  // The modifications above can leave fields that only beam search refuses; keep the failure the one named.
  if (req.useBeamSearch && kind !== 'beamGrammar') delete req.grammar;
}

/** Blocks the request can need at most when it runs alone (each choice holding its whole sequence). */
function maxBlocks(p: Planned, cfg: Config): number {
  const len = (p.req.promptTokens as number[]).length;
  const maxTokens = p.req.maxTokens ?? cfg.maxModelLen - len;
  return (p.req.n ?? 1) * blocksFor(len + maxTokens);
}

async function runOne(engine: Engine, p: Planned): Promise<Outcome> {
  if (p.startDelay > 0) await sleep(p.startDelay);
  const t0 = performance.now();
  const controller = new AbortController();
  if (p.abort === 'before') controller.abort();
  const out: Outcome = { events: [] };
  if (LOG) writeSync(2, `submit ${p.index} ${JSON.stringify(describePlan(p))}\n`);
  let stream: AsyncIterable<GenerateEvent>;
  try {
    stream = engine.generate(p.req, { signal: controller.signal });
  } catch (error) {
    out.threw = error;
    return out;
  }
  if (p.abort === 'immediate') controller.abort();
  if (p.abort === 'delay') setTimeout(() => controller.abort(), p.abortAfter);
  let tokenEvents = 0;
  for await (const ev of stream) {
    out.events.push(ev);
    if (ev.tokenIds.length > 0) tokenEvents++;
    if (p.abort === 'tokens' && tokenEvents >= p.abortAfter) controller.abort();
  }
  controller.abort(); // a late abort of a finished request is a no-op
  if (LOG) writeSync(2, `done ${p.index} ${(performance.now() - t0).toFixed(0)} ms ${out.events.at(-1)?.finishReason}\n`);
  return out;
}

// The plan in a line: the prompt by its length and first ids (the seed reproduces the rest).
function describePlan(p: Planned): unknown {
  const { grammar: _g, promptTokens, ...req } = p.req;
  const prompt = promptTokens as number[];
  return { ...p, req: { prompt: `${prompt.length}: ${prompt.slice(0, 4).join(',')}…`, ...req, grammar: p.grammarName } };
}

interface ChoiceView {
  tokens: number[];
  finishes: GenerateEvent[];
  afterFinish: number;
}

// Every invariant of one request's outcome; returns the violations (empty when all hold).
// `closed`: the engine was closed while requests ran (they end with abort; later ones throw disposed).
function check(p: Planned, o: Outcome, cfg: Config, closed: boolean): string[] {
  const bad: string[] = [];
  const req = p.req;
  const prompt = req.promptTokens as number[];
  const n = req.n ?? 1;
  if (o.threw !== undefined) {
    const code = (o.threw as { code?: unknown }).code;
    if (typeof code !== 'string') bad.push(`threw without a code: ${String(o.threw)}`);
    if (!p.invalid && !(closed && code === 'disposed')) bad.push(`a valid request threw: ${String(o.threw)}`);
    return bad;
  }
  const events = o.events;
  if (events.length === 0) return ['no events'];
  const last = events[events.length - 1]!;
  if (!last.done) bad.push('the last event is not done');
  if (events.filter((e) => e.done).length !== 1) bad.push(`${events.filter((e) => e.done).length} done events`);
  const aborted = p.abort !== 'none' || closed;
  if (last.finishReason === 'error') {
    const code = last.error?.code;
    if (typeof code !== 'string') bad.push('an error finish without a code');
    const allowed = p.invalid || (p.grammarName && code === 'grammar_invalid') || maxBlocks(p, cfg) > cfg.blocks;
    if (!allowed) bad.push(`a valid request failed: ${code}: ${last.error?.message}`);
    // Refused at admission: one error event and nothing else is the whole story.
    if (events.length === 1) return bad;
  } else if (p.invalid && !(aborted && last.finishReason === 'abort')) {
    bad.push(`an invalid request (${p.invalid}) ended with ${last.finishReason}`);
    return bad;
  }

  const choices: ChoiceView[] = Array.from({ length: n }, () => ({ tokens: [], finishes: [], afterFinish: 0 }));
  for (const ev of events) {
    const c = choices[ev.index];
    if (!c) {
      bad.push(`event for choice ${ev.index} of ${n}`);
      continue;
    }
    if (c.finishes.length > 0) c.afterFinish++;
    c.tokens.push(...ev.tokenIds);
    if (ev.finishReason) c.finishes.push(ev);
    if (ev.logprobs && ev.logprobs.length !== ev.tokenIds.length) bad.push(`logprobs for ${ev.logprobs.length} of ${ev.tokenIds.length} tokens`);
    const wantLogprobs = !req.useBeamSearch && req.logprobs !== undefined && req.logprobs !== false;
    if (ev.tokenIds.length > 0 && !req.useBeamSearch && wantLogprobs !== (ev.logprobs !== undefined)) bad.push(`logprobs ${wantLogprobs ? 'missing' : 'unasked'}`);
    if (ev.logprobs && typeof req.logprobs === 'number') {
      const nTop = Math.min(req.logprobs, V);
      for (const lp of ev.logprobs) if (lp.top.length !== nTop) bad.push(`logprobs top ${lp.top.length} != ${nTop}`);
    }
  }
  const maxTokens = req.maxTokens ?? Math.max(0, cfg.maxModelLen - prompt.length);
  for (const [i, c] of choices.entries()) {
    if (c.finishes.length !== 1) bad.push(`choice ${i}: ${c.finishes.length} finish events`);
    if (c.afterFinish > 0) bad.push(`choice ${i}: ${c.afterFinish} events after its finish`);
    const f = c.finishes[0];
    if (!f) continue;
    const ntok = c.tokens.length;
    if (ntok > maxTokens) bad.push(`choice ${i}: ${ntok} tokens > maxTokens ${maxTokens}`);
    if (f.usage?.completionTokens !== ntok) bad.push(`choice ${i}: usage.completionTokens ${f.usage?.completionTokens} != ${ntok} tokens`);
    if (f.usage?.promptTokens !== prompt.length) bad.push(`choice ${i}: usage.promptTokens ${f.usage?.promptTokens} != ${prompt.length}`);
    if (f.finishReason === 'abort' && !aborted) bad.push(`choice ${i}: aborted without an abort`);
    if (f.finishReason === 'repetition' && !req.repetitionDetection) bad.push(`choice ${i}: repetition finish without detection`);
    if (!req.useBeamSearch) {
      if (f.finishReason === 'length' && ntok !== maxTokens) bad.push(`choice ${i}: length finish after ${ntok} of ${maxTokens} tokens`);
      if (f.finishReason === 'stop' && ntok < (req.minTokens ?? 0)) bad.push(`choice ${i}: stop after ${ntok} < minTokens ${req.minTokens}`);
      if (f.finishReason === 'stop' && req.ignoreEos && !req.stop && !req.stopTokenIds && !req.grammar) bad.push(`choice ${i}: stop with ignoreEos`);
      if (f.finishReason === 'stop' && typeof f.stopReason === 'number' && !(req.stopTokenIds ?? []).includes(f.stopReason)) bad.push(`choice ${i}: stop token ${f.stopReason} not asked for`);
      if (f.finishReason === 'stop' && typeof f.stopReason === 'string' && !([] as string[]).concat(req.stop ?? []).includes(f.stopReason)) bad.push(`choice ${i}: stop string ${f.stopReason} not asked for`);
    } else if ((f.finishReason === 'stop' || f.finishReason === 'length') && f.cumLogprob === undefined) {
      bad.push(`choice ${i}: beam finish without cumLogprob`);
    }
  }
  // Prompt logprobs: once, with the first token, one entry per prompt position from 1.
  const withPl = events.filter((e) => e.promptLogprobs);
  const anyTokens = choices.some((c) => c.tokens.length > 0);
  if (req.promptLogprobs === undefined || req.useBeamSearch) {
    if (withPl.length > 0) bad.push('prompt logprobs nobody asked for');
  } else if (anyTokens) {
    if (withPl.length !== 1) bad.push(`${withPl.length} events with prompt logprobs`);
    const pl = withPl[0]?.promptLogprobs;
    if (pl) {
      if (pl.length !== prompt.length - 1) bad.push(`${pl.length} prompt logprobs for a ${prompt.length}-token prompt`);
      for (const [j, e] of pl.entries()) {
        if (e.token !== prompt[j + 1]) bad.push(`prompt logprob ${j} is for token ${e.token}, not ${prompt[j + 1]}`);
        if (e.top.length !== req.promptLogprobs) bad.push(`prompt logprob ${j}: top ${e.top.length} != ${req.promptLogprobs}`);
        if (!(e.logprob <= 0)) bad.push(`prompt logprob ${j}: ${e.logprob}`);
      }
    }
  }
  return bad;
}

async function withDeadline<T>(what: string, ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer in ${ms} ms (hang)`)), ms);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

let model: Model;
let reference: Engine;
const grammars = new Map<string, Grammar>();
const probe = [1, 403, 407, 261, 378, 300, 400, 270, 290, 350];
let probeTokens: number[];

beforeAll(async () => {
  model = await Model.load(stories260K);
  // maxLogprobs -1: the reference runs whatever logprobs a stress engine allowed
  reference = await Engine.create(model, { kvCacheMemory: 409 * BLOCK_BYTES, threads: 1, maxLogprobs: -1 });
  grammars.set('yesNo', await model.compileGrammar('root ::= "yes" | "no"'));
  grammars.set('letters', await model.compileGrammar('root ::= [a-e ]+'));
  grammars.set('list', await model.compileGrammar('root ::= "[" item ("," item)* "]"\nitem ::= [0-9]+'));
  probeTokens = (await collect(reference, { promptTokens: probe, maxTokens: 24, temperature: 0 })).tokens;
});

afterAll(async () => {
  await reference?.close();
});

async function stressSeed(seed: number): Promise<void> {
  const r = new Rand(seed * 7919 + 17);
  const cfg = engineConfig(r);
  const label = `seed ${seed} ${JSON.stringify(cfg.options)}`;
  if (LOG) writeSync(2, `${label}\n`);
  const engine = await Engine.create(model, cfg.options);
  try {
    expect(engine.kvBlocksTotal, label).toBe(cfg.blocks);
    const prefixes = [r.tokens(r.int(16, 40)), r.tokens(r.int(32, 100)), [1, ...r.tokens(r.int(15, 60))]];
    const plans = Array.from({ length: r.int(12, 28) }, (_, i) => planRequest(r, cfg, i, prefixes, grammars));
    // Now and then the engine is closed under load: every request must still end (abort).
    const closeAfter = r.chance(0.15) ? r.int(0, 40) : -1;
    const running = Promise.all(plans.map((p) => runOne(engine, p)));
    if (closeAfter >= 0) {
      await sleep(closeAfter);
      await engine.close();
    }
    const outcomes = await withDeadline(label, 30_000, running);

    const violations: string[] = [];
    for (const [i, p] of plans.entries()) {
      for (const v of check(p, outcomes[i]!, cfg, closeAfter >= 0)) violations.push(`request ${i} ${JSON.stringify(describePlan(p))}: ${v}`);
    }
    expect(violations, label).toEqual([]);
    if (closeAfter >= 0) return;

    // Idle, with every block back (cached prefixes count as free).
    const stats = engine.stats();
    if (LOG) writeSync(2, `stats ${seed} ${JSON.stringify(stats)}\n`);
    expect({ running: stats.running, waiting: stats.waiting, kvCacheUsage: stats.kvCacheUsage, kvBlocksFree: stats.kvBlocksFree }, label).toEqual({
      running: 0,
      waiting: 0,
      kvCacheUsage: 0,
      kvBlocksFree: cfg.blocks,
    });

    // Still serving, exactly as the reference engine.
    if (probe.length + 24 <= cfg.maxModelLen && blocksFor(probe.length + 24) <= cfg.blocks) {
      const again = await withDeadline(label, 10_000, collect(engine, { promptTokens: probe, maxTokens: 24, temperature: 0 }));
      expect(again.tokens, label).toEqual(probeTokens);
    }

    // Batch invariance: a few reproducible requests of the mix (greedy or seeded, finished normally) give
    // the same tokens alone on the reference engine.
    const reproducible = plans.filter((p, i) => {
      const last = outcomes[i]!.events.at(-1);
      const seeded = p.req.temperature === 0 || p.req.seed !== undefined || p.req.useBeamSearch;
      return !p.invalid && seeded && p.req.maxTokens !== undefined && last && (last.finishReason === 'stop' || last.finishReason === 'length');
    });
    for (const p of reproducible.slice(0, 4)) {
      const n = p.req.n ?? 1;
      const alone = await withDeadline(label, 10_000, collect(reference, p.req));
      expect(tokensByChoice(outcomes[p.index]!.events, n), `${label} request ${p.index} ${JSON.stringify(describePlan(p))}`).toEqual(tokensByChoice(alone.events, n));
    }
  } finally {
    await engine.close();
  }
}

describe('engine stress', () => {
  for (let s = SEED_BASE; s < SEED_BASE + SEEDS; s++) {
    it(`seed ${s}`, () => stressSeed(s), 60_000);
  }
});

describe('adversarial engine options', () => {
  const small = 64 * BLOCK_BYTES;
  const prompt = [1, 403, 407, 300, 301];
  // [options, request or null (create only), what must happen]
  const cases: [EngineOptions, GenerateRequest | null, string][] = [
    [{ kvCacheMemory: small, maxNumSeqs: 1 }, { promptTokens: prompt, maxTokens: 5, useBeamSearch: true, n: 1 }, 'length'],
    [{ kvCacheMemory: small, maxNumSeqs: 8, maxNumBatchedTokens: 1 }, { promptTokens: prompt, maxTokens: 5, n: 8, temperature: 1, seed: 3, promptLogprobs: 3 }, 'length'],
    [{ kvCacheMemory: small, maxNumSeqs: 8, maxNumBatchedTokens: 3 }, { promptTokens: prompt, maxTokens: 5, n: 8, useBeamSearch: true }, 'length'],
    [{ kvCacheMemory: BLOCK_BYTES }, { promptTokens: prompt, maxTokens: 12 }, 'length'],
    [{ kvCacheMemory: BLOCK_BYTES }, { promptTokens: prompt, maxTokens: 4, n: 2 }, 'error:invalid_argument'],
    [{ kvCacheMemory: BLOCK_BYTES }, { promptTokens: prompt, maxTokens: 4, n: 2, useBeamSearch: true }, 'error:invalid_argument'],
    [{ kvCacheMemory: small, maxModelLen: 4 }, { promptTokens: prompt, maxTokens: 1 }, 'error:invalid_argument'],
    [{ kvCacheMemory: small, maxModelLen: 6 }, { promptTokens: prompt }, 'length'],
    [{ kvCacheMemory: small, maxModelLen: 1 }, { promptTokens: [1] }, 'error:invalid_argument'],
    [{ kvCacheMemory: small, maxModelLen: 5000 }, { promptTokens: prompt, maxTokens: 3 }, 'length'],
    [{ kvCacheMemory: small, threads: 0 }, { promptTokens: prompt, maxTokens: 3 }, 'length'],
    [{ kvCacheMemory: small, maxLogprobs: -1 }, { promptTokens: prompt, maxTokens: 2, logprobs: V, promptLogprobs: V }, 'length'],
    [{ kvCacheMemory: small, maxLogprobs: 0 }, { promptTokens: prompt, maxTokens: 2, logprobs: 1 }, 'error:invalid_argument'],
    [{ kvCacheMemory: small, maxNumSeqs: 65536, maxNumBatchedTokens: 1 }, { promptTokens: prompt, maxTokens: 3, n: 4 }, 'length'],
    [{ kvCacheMemory: 1 }, null, 'create:out_of_memory'],
    [{ kvCacheMemory: BLOCK_BYTES - 1 }, null, 'create:out_of_memory'],
    [{ kvCacheMemory: 1.5 }, null, 'create:invalid_argument'],
    [{ kvCacheMemory: Number.NaN }, null, 'create:invalid_argument'],
    [{ threads: -1 }, null, 'create:invalid_argument'],
    [{ threads: 513 }, null, 'create:invalid_argument'],
    [{ maxNumSeqs: 0 }, null, 'create:invalid_argument'],
    [{ maxNumBatchedTokens: 0 }, null, 'create:invalid_argument'],
    [{ maxLogprobs: -2 }, null, 'create:invalid_argument'],
    [{ maxModelLen: -1 }, null, 'create:invalid_argument'],
    [{ schedulingPolicy: 'lifo' as 'fcfs' }, null, 'create:invalid_argument'],
  ];

  it('each works or is refused at Engine.create with a coded error', async () => {
    for (const [options, req, want] of cases) {
      const label = `${JSON.stringify(options)} ${want}`;
      let engine: Engine;
      try {
        engine = await Engine.create(model, { threads: 1, ...options });
      } catch (error) {
        expect(`create:${(error as { code?: string }).code}`, label).toBe(want);
        continue;
      }
      try {
        expect(req, label).not.toBeNull();
        const { events } = await withDeadline(label, 10_000, collect(engine, req!));
        const n = req!.n ?? 1;
        const finishes = events.filter((e) => e.finishReason);
        expect(finishes.map((e) => e.index).sort((a, b) => a - b), label).toEqual([...Array(n).keys()]);
        for (const f of finishes) expect(f.finishReason === 'error' ? `error:${f.error?.code}` : f.finishReason, label).toBe(want);
        expect(events.filter((e) => e.done).length, label).toBe(1);
        const stats = engine.stats();
        expect([stats.running, stats.waiting, stats.kvBlocksFree], label).toEqual([0, 0, stats.kvBlocksTotal]);
      } finally {
        await engine.close();
      }
    }
  });
});
