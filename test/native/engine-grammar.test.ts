// Grammar-constrained decoding through the engine on stories260K: outputs match the grammar (checked by
// an independent GBNF acceptor) with temperature 1, several seeds, n = 3, next to unconstrained requests
// in the same batch, across preemption; logprobs come from the masked distribution; compile errors reach
// JS with code 'grammar_invalid' and a position.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine, Grammar, GrammarError, Model, type GenerateEvent, type GenerateRequest } from '../../lib/index.js';
import { compileGbnf } from '../helpers/gbnf-acceptor.js';
import { prompts } from '../helpers/engine-run.js';
import { stories260K } from '../helpers/shared.js';

let model: Model;
let engine: Engine;
// stories260K: 5 layers × 4 KV heads × head dim 8, F16 K and V → 10,240 bytes a block.
const blockBytes = 10_240;

beforeAll(async () => {
  model = await Model.load(stories260K);
  engine = await Engine.create(model, { kvCacheMemory: 4 << 20, threads: 1 });
});

afterAll(async () => {
  await engine.close();
  model.dispose();
});

interface Choice {
  text: string;
  tokens: number[];
  finishReason?: string;
  events: GenerateEvent[];
}

async function run(e: Engine, request: GenerateRequest): Promise<Choice[]> {
  const n = request.n ?? 1;
  const out: Choice[] = Array.from({ length: n }, () => ({ text: '', tokens: [], events: [] }));
  for await (const ev of e.generate(request)) {
    const c = out[ev.index]!;
    c.text += ev.text;
    c.tokens.push(...ev.tokenIds);
    c.events.push(ev);
    if (ev.finishReason) c.finishReason = ev.finishReason;
  }
  return out;
}

const prompt = model0Prompt();
function model0Prompt(): number[] {
  return prompts(1, 12, 12, 512, 9)[0]!;
}

const yesNo = 'root ::= "yes" | "no"';
const jsonish = [
  'root   ::= "{" ws pair ("," ws pair){0,2} ws "}"',
  'pair   ::= key ws ":" ws value',
  'key    ::= "\\"" [a-z]{1,6} "\\""',
  'value  ::= [0-9]{1,4} | "true" | "false" | "[" ws ([0-9] ("," ws [0-9])*)? ws "]"',
  'ws     ::= " "?',
].join('\n');

describe('grammar-constrained generation', () => {
  it('root ::= "yes" | "no": every choice of every seed is exactly yes or no and stops', async () => {
    const grammar = await Grammar.compile(model, yesNo);
    const oracle = compileGbnf(yesNo);
    // Unconstrained requests share the batch.
    const free = [1, 2].map((seed) => run(engine, { promptTokens: prompt, maxTokens: 24, temperature: 1, seed, ignoreEos: true }));
    const constrained = [1, 2, 3, 4].map((seed) =>
      run(engine, { promptTokens: prompt, n: 3, maxTokens: 24, temperature: 1, seed, grammar }),
    );
    const results = await Promise.all(constrained);
    const seen = new Set<string>();
    for (const choices of results) {
      expect(choices).toHaveLength(3);
      for (const c of choices) {
        expect(oracle.accepts(c.text), JSON.stringify(c.text)).toBe(true);
        expect(c.finishReason).toBe('stop');
        seen.add(c.text);
      }
    }
    for (const f of await Promise.all(free)) {
      expect(f[0]!.tokens).toHaveLength(24);
      expect(oracle.accepts(f[0]!.text)).toBe(false);
    }
    expect(seen.size).toBeGreaterThan(0);
  });

  it('a small JSON-ish grammar: outputs parse, with temperature 1, several seeds and n = 3', async () => {
    const grammar = await model.compileGrammar(jsonish);
    const oracle = compileGbnf(jsonish);
    const runs = await Promise.all(
      [11, 12, 13].map((seed) => run(engine, { promptTokens: prompt, n: 3, maxTokens: 120, temperature: 1, seed, grammar })),
    );
    let stopped = 0;
    for (const choices of runs) {
      for (const c of choices) {
        if (c.finishReason === 'stop') {
          expect(oracle.accepts(c.text), JSON.stringify(c.text)).toBe(true);
          stopped++;
        } else {
          // Cut by maxTokens: still a prefix of the language.
          expect(c.finishReason).toBe('length');
          expect(c.text.startsWith('{')).toBe(true);
        }
      }
    }
    expect(stopped).toBeGreaterThan(0);
    // Greedy requests keep the mask too (it is not argmax-invariant).
    const [greedy] = await run(engine, { promptTokens: prompt, maxTokens: 120, temperature: 0, grammar });
    if (greedy!.finishReason === 'stop') expect(oracle.accepts(greedy!.text)).toBe(true);
    else expect(greedy!.text.startsWith('{')).toBe(true);
  });

  it('logprobs come from the masked distribution: after a complete match EOS has probability 1', async () => {
    const grammar = await Grammar.compile(model, yesNo);
    const [c] = await run(engine, { promptTokens: prompt, maxTokens: 10, temperature: 1, seed: 3, logprobs: 3, grammar });
    const lps = c!.events.flatMap((e) => e.logprobs ?? []);
    expect(lps.length).toBe(c!.tokens.length);
    for (const lp of lps) {
      expect(Number.isFinite(lp.logprob)).toBe(true);
      // Every alternative with any mass is a token the grammar allows here: masked ones are -inf.
      for (const t of lp.top) if (Number.isFinite(t.logprob)) expect(t.logprob).toBeLessThanOrEqual(0);
    }
    const last = lps[lps.length - 1]!;
    expect(c!.finishReason).toBe('stop');
    expect(last.token).toBe(model.info.eosTokenId);
    expect(last.logprob).toBeCloseTo(0, 5);
    expect(last.rank).toBe(1);
    // The first token's alternatives with mass spell a prefix of yes / no.
    for (const t of lps[0]!.top) {
      if (!Number.isFinite(t.logprob)) continue;
      const piece = model.detokenize([t.token], { skipSpecialTokens: true });
      expect(['yes', 'no'].some((w) => w.startsWith(piece.trimStart()))).toBe(true);
    }
  });

  it('preemption and recompute keep each choice on its grammar (same tokens as without preemption)', async () => {
    const g = 'root ::= [a-e ]+';
    const grammar = await Grammar.compile(model, g);
    const oracle = compileGbnf(g);
    const ps = prompts(8, 20, 40, 512, 3);
    const request = (p: number[], i: number): GenerateRequest => ({
      promptTokens: p, maxTokens: 60, temperature: i % 2 === 0 ? 0 : 1, seed: i, grammar, ignoreEos: true,
    });
    const big = await Engine.create(model, { kvCacheMemory: 400 * blockBytes, threads: 1 });
    const expected = await Promise.all(ps.map((p, i) => run(big, request(p, i))));
    await big.close();
    // 24 blocks hold 384 tokens: eight sequences growing to ~100 tokens each cannot all stay resident.
    const small = await Engine.create(model, { kvCacheMemory: 24 * blockBytes, threads: 1 });
    const got = await Promise.all(ps.map((p, i) => run(small, request(p, i))));
    const stats = small.stats();
    await small.close();
    expect(stats.preemptions).toBeGreaterThan(0);
    for (const [i, [c]] of got.entries()) {
      expect(c!.tokens, `request ${i}`).toEqual(expected[i]![0]!.tokens);
      expect(oracle.accepts(c!.text), JSON.stringify(c!.text)).toBe(true);
    }
  });

  it('a grammar too ambiguous to follow ends the choice with an error, not a hang', async () => {
    // Every "a" opens a level closed by p or q: 2^k distinct parse stacks after k letters.
    const grammar = await Grammar.compile(model, 'root ::= s\ns ::= "a" s p | "a" s q | "a"\np ::= "b"?\nq ::= "c"?');
    let a = -1;
    for (let id = 0; id < model.info.vocabSize && a < 0; id++) if (model.tokenPiece(id) === 'a') a = id;
    expect(a).toBeGreaterThanOrEqual(0);
    const [c] = await run(engine, { promptTokens: prompt, maxTokens: 60, temperature: 0, logitBias: { [a]: 100 }, grammar });
    expect(c!.finishReason).toBe('error');
    const last = c!.events[c!.events.length - 1]!;
    expect(last.error?.code).toBe('grammar_invalid');
    expect(last.error?.message).toMatch(/too ambiguous/);
    expect(c!.text).toMatch(/^a{1,11}$/);
  });

  it('a grammar compiled for another model is refused at submit', async () => {
    const other = await Model.load(stories260K);
    try {
      const foreign = await other.compileGrammar(yesNo);
      expect(() => engine.generate({ promptTokens: prompt, grammar: foreign })).toThrow('the grammar was compiled for a different model');
    } finally {
      other.dispose();
    }
  });

  it('grammarAfter: free text until the trigger (also split across tokens), then the grammar; bad uses are refused', async () => {
    // Greedy on "Once upon a time" is llama.cpp's ", there was a little girl named Lily. …" (the oracle),
    // where " girl" is the tokens " g", "ir", "l": "irl" spans two of them.
    const once = [1, 403, 407, 261, 378];
    const grammar = await Grammar.compile(model, yesNo);
    for (const trigger of [' girl', 'irl', ' little']) {
      const free = (await run(engine, { promptTokens: once, maxTokens: 40, temperature: 0 }))[0]!.text;
      const cut = free.indexOf(trigger) + trigger.length;
      expect(cut).toBeGreaterThan(trigger.length - 1);
      const [c] = await run(engine, { promptTokens: once, maxTokens: 60, temperature: 0, grammar, grammarAfter: trigger });
      expect(c!.finishReason).toBe('stop');
      expect(c!.text.slice(0, cut)).toBe(free.slice(0, cut));
      expect(['yes', 'no']).toContain(c!.text.slice(cut));
    }
    // The bytes after the trigger inside its token are the grammar's first text: " gi" leaves "r".
    const [mid] = await run(engine, { promptTokens: once, maxTokens: 60, temperature: 0, grammar, grammarAfter: ' gi' });
    expect(mid!.finishReason).toBe('error');
    expect(mid!.events[mid!.events.length - 1]!.error?.message).toMatch(/text after the trigger does not follow the grammar/);
    // A trigger that never appears leaves the output unconstrained.
    const [never] = await run(engine, { promptTokens: once, maxTokens: 12, temperature: 0, grammar, grammarAfter: '</think>' });
    const [plain] = await run(engine, { promptTokens: once, maxTokens: 12, temperature: 0 });
    expect(never!.text).toBe(plain!.text);
    expect(() => engine.generate({ promptTokens: once, grammarAfter: '</think>' })).toThrow('grammarAfter needs a grammar');
    expect(() => engine.generate({ promptTokens: once, grammar, grammarAfter: '' })).toThrow(/non-empty string for grammarAfter/);
  });

  it('beam search refuses a grammar instead of ignoring it', async () => {
    const grammar = await Grammar.compile(model, yesNo);
    const [c] = await run(engine, { promptTokens: prompt, n: 2, useBeamSearch: true, maxTokens: 8, grammar });
    expect(c!.finishReason).toBe('error');
    const last = c!.events[c!.events.length - 1]!;
    expect(last.error?.code).toBe('invalid_argument');
    expect(last.error?.message).toBe('structured outputs (a grammar) cannot be combined with beam search');
  });

  it('compile errors reject with code grammar_invalid and the position', async () => {
    const cases: [string, number, number, RegExp][] = [
      ['root ::= foo', 1, 10, /undefined rule 'foo'/],
      ['item ::= "a"', 1, 1, /missing rule 'root'/],
      ['root ::= "a"\n  | "b" )', 2, 9, /unexpected '\)'/],
      ['root ::= x\nx ::= x "a" | "b"', 2, 1, /left recursion/],
      ['root ::= [a-', 1, 10, /unterminated character class/],
    ];
    for (const [text, line, column, message] of cases) {
      const caught = await Grammar.compile(model, text).then(() => null, (error: unknown) => error);
      expect(caught).toBeInstanceOf(GrammarError);
      const e = caught as GrammarError;
      expect(e.code).toBe('grammar_invalid');
      expect(e.status).toBe(400);
      expect(e.message).toMatch(message);
      expect(e.message).toContain(`line ${line}, column ${column}`);
      expect([e.line, e.column]).toEqual([line, column]);
    }
    await expect(model.compileGrammar(42 as unknown as string)).rejects.toThrow(/Expected a string for grammar/);
    expect(() => engine.generate({ promptTokens: prompt, grammar: 'root ::= "a"' as unknown as Grammar })).toThrow(
      /Expected a Grammar/,
    );
  });
});
