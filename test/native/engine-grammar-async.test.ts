// Grammar compiling off the JS thread on stories260K: compile resolves or rejects (with the position),
// concurrent compiles, the event loop keeps turning while a big grammar compiles on a libuv worker, and
// the per-model LRU cache of compiled grammars (same text → same immutable object; failures not kept).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine, Grammar, GrammarError, Model, type GenerateRequest } from '../../lib/index.js';
import { GRAMMAR_CACHE_SIZE } from '../../lib/engine/grammar.js';
import { compileGbnf } from '../helpers/gbnf-acceptor.js';
import { stories260K } from '../helpers/shared.js';

let model: Model;
let engine: Engine;

beforeAll(async () => {
  model = await Model.load(stories260K);
  engine = await Engine.create(model, { kvCacheMemory: 4 << 20, threads: 1 });
});

afterAll(async () => {
  await engine.close();
  model.dispose();
});

const once = [1, 403, 407, 261, 378];

async function text(request: GenerateRequest): Promise<{ text: string; finishReason?: string }> {
  let out = '';
  let finishReason: string | undefined;
  for await (const ev of engine.generate(request)) {
    out += ev.text;
    if (ev.finishReason) finishReason = ev.finishReason;
  }
  return { text: out, finishReason };
}

// A grammar with many rules: `root` chooses among n words, each its own rule with a repetition, so parsing
// and validating it is real work on the worker.
function bigGrammar(n: number, tag: string): string {
  const lines = [`root ::= ${Array.from({ length: n }, (_, i) => `w${i}`).join(' | ')}`];
  for (let i = 0; i < n; i++) lines.push(`w${i} ::= "${tag}${i.toString(36)}" [a-z]{0,3} ("-" [0-9]{1,2})?`);
  return lines.join('\n');
}

describe('async grammar compile', () => {
  it('resolves to a Grammar usable by requests, without blocking the caller', async () => {
    const pending = model.compileGrammar('root ::= "yes" | "no"');
    expect(pending).toBeInstanceOf(Promise);
    const grammar = await pending;
    expect(grammar).toBeInstanceOf(Grammar);
    expect(grammar.text).toBe('root ::= "yes" | "no"');
    const r = await text({ promptTokens: once, maxTokens: 8, temperature: 0, grammar });
    expect(r.finishReason).toBe('stop');
    expect(['yes', 'no']).toContain(r.text);
  });

  it('rejects with GrammarError, the position, and a stack from the caller', async () => {
    const e = await Grammar.compile(model, 'root ::= "a"\nb ::= c').then(() => null, (x: unknown) => x);
    expect(e).toBeInstanceOf(GrammarError);
    const g = e as GrammarError;
    expect(g.code).toBe('grammar_invalid');
    expect(g.status).toBe(400);
    expect([g.line, g.column]).toEqual([2, 7]);
    expect(g.message).toBe("grammar: undefined rule 'c' at line 2, column 7");
    expect(g.stack).toContain('engine-grammar-async.test');
    // A wrong model argument is refused by the addon synchronously, before any worker runs.
    const bad = await Grammar.compile({ handle: {}, addon: model.addon, grammarCache: model.grammarCache } as unknown as Model, 'root ::= "x"').then(() => null, (x: unknown) => x);
    expect((bad as GrammarError).code).toBe('invalid_argument');
    expect((bad as Error).message).toBe('Expected a NativeModel for model');
  });

  it('two concurrent compiles both resolve, each to its own grammar', async () => {
    const a = 'root ::= "alpha" [0-9]';
    const b = 'root ::= "beta" [a-c]{2}';
    const [ga, gb] = await Promise.all([model.compileGrammar(a), Grammar.compile(model, b)]);
    expect([ga.text, gb.text]).toEqual([a, b]);
    expect(ga).not.toBe(gb);
    const [ra, rb] = await Promise.all([
      text({ promptTokens: once, maxTokens: 12, temperature: 1, seed: 3, grammar: ga }),
      text({ promptTokens: once, maxTokens: 12, temperature: 1, seed: 3, grammar: gb }),
    ]);
    expect(compileGbnf(a).accepts(ra.text)).toBe(true);
    expect(compileGbnf(b).accepts(rb.text)).toBe(true);
    // One good and one bad at once: each settles on its own.
    const both = await Promise.allSettled([model.compileGrammar('root ::= "ok"'), model.compileGrammar('root ::= ok')]);
    expect(both[0].status).toBe('fulfilled');
    expect(both[1].status).toBe('rejected');
    expect((both[1] as PromiseRejectedResult).reason).toBeInstanceOf(GrammarError);
  });

  it('the event loop turns while a big grammar compiles on the worker', async () => {
    // A fresh model has a fresh vocabulary, so its first compile also builds the byte trie.
    const fresh = await Model.load(stories260K);
    try {
      const order: string[] = [];
      let ticks = 0;
      let compiling = true;
      const tick = (): void => {
        if (!compiling) return;
        ticks++;
        if (ticks === 1) order.push('tick');
        setImmediate(tick);
      };
      setImmediate(tick);
      const compiled = fresh.compileGrammar(bigGrammar(1500, 'k')).then((g) => {
        compiling = false;
        order.push('compiled');
        return g;
      });
      order.push('called');
      const g = await compiled;
      // A compile on the JS thread would settle before any immediate (its continuation is a microtask).
      expect(order).toEqual(['called', 'tick', 'compiled']);
      expect(ticks).toBeGreaterThanOrEqual(1);
      expect(g.handle.info().rules).toBeGreaterThanOrEqual(1501);
    } finally {
      fresh.dispose();
    }
  });
});

describe('compiled-grammar cache', () => {
  it('the same text resolves to the same object (concurrent calls share one compile)', async () => {
    const t = 'root ::= "cached" [0-9]{2}';
    const p1 = model.compileGrammar(t);
    const p2 = Grammar.compile(model, t);
    expect(p2).toBe(p1);
    const g1 = await p1;
    expect(await model.compileGrammar(t)).toBe(g1);
    expect(await Grammar.compile(model, t)).toBe(g1);
    // Another model (another vocabulary) has its own cache.
    const other = await Model.load(stories260K);
    try {
      const g2 = await other.compileGrammar(t);
      expect(g2).not.toBe(g1);
      expect(() => engine.generate({ promptTokens: once, grammar: g2 })).toThrow('the grammar was compiled for a different model');
    } finally {
      other.dispose();
    }
    expect(other.grammarCache.size).toBe(0);
  });

  it('a failed compile is not kept: the next call compiles again', async () => {
    const bad = 'root ::= "a" missing_rule';
    const before = model.grammarCache.size;
    const p1 = model.compileGrammar(bad);
    await expect(p1).rejects.toBeInstanceOf(GrammarError);
    expect(model.grammarCache.size).toBe(before);
    const p2 = model.compileGrammar(bad);
    expect(p2).not.toBe(p1);
    await expect(p2).rejects.toThrow("undefined rule 'missing_rule'");
  });

  it('keeps the most recently used GRAMMAR_CACHE_SIZE texts', async () => {
    const fresh = await Model.load(stories260K);
    try {
      const texts = Array.from({ length: GRAMMAR_CACHE_SIZE + 1 }, (_, i) => `root ::= "lru${i}"`);
      const first: Grammar[] = [];
      for (const t of texts.slice(0, GRAMMAR_CACHE_SIZE)) first.push(await fresh.compileGrammar(t));
      expect(fresh.grammarCache.size).toBe(GRAMMAR_CACHE_SIZE);
      // Touch text 0 so text 1 is now the least recently used, then overflow by one.
      expect(await fresh.compileGrammar(texts[0]!)).toBe(first[0]);
      await fresh.compileGrammar(texts[GRAMMAR_CACHE_SIZE]!);
      expect(fresh.grammarCache.size).toBe(GRAMMAR_CACHE_SIZE);
      expect(await fresh.compileGrammar(texts[0]!)).toBe(first[0]);
      expect(await fresh.compileGrammar(texts[2]!)).toBe(first[2]);
      const again = await fresh.compileGrammar(texts[1]!);
      expect(again).not.toBe(first[1]);
      expect(again.text).toBe(texts[1]);
    } finally {
      fresh.dispose();
    }
    expect(fresh.grammarCache.size).toBe(0);
  });
});
