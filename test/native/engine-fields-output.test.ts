// The fields that decide where a generation ends and what text it returns, end to end through
// engine.generate on stories260K (issue #4 item 9): maxTokens, stop, stopTokenIds, includeStopStrInOutput,
// ignoreEos, minTokens, skipSpecialTokens, spacesBetweenSpecialTokens, xargs, and prompt logprobs' top
// lists. The reference is the plain greedy run (whose text the llama.cpp oracle fixes) and Model.evaluate.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine, type GenerateRequest, Model } from '../../lib/index.js';
import { collect } from '../helpers/engine-run.js';
import { stories260K } from '../helpers/shared.js';

let model: Model;
let engine: Engine;
const V = 512;
const EOS = 2;
const BOS = 1;

// "Once upon a time" → ", there was a little girl named Lily. She loved ..." (greedy)
const prompt = [1, 403, 407, 261, 378];
let plain: { tokens: number[]; text: string };

beforeAll(async () => {
  model = await Model.load(stories260K);
  engine = await Engine.create(model, { kvCacheMemory: 4 << 20, threads: 1 });
  const r = await collect(engine, { promptTokens: prompt, maxTokens: 16, temperature: 0 });
  plain = { tokens: r.tokens, text: r.text };
});

afterAll(async () => {
  await engine.close();
});

const greedy = (fields: Partial<GenerateRequest>) => collect(engine, { promptTokens: prompt, maxTokens: 16, temperature: 0, ...fields });

describe('maxTokens and stop strings', () => {
  it('the reference run is the oracle text and maxTokens caps it with finishReason length', async () => {
    expect(plain.text.startsWith(', there was a little girl named Lily.')).toBe(true);
    const r = await greedy({ maxTokens: 5 });
    expect(r.tokens).toEqual(plain.tokens.slice(0, 5));
    expect(r.last).toMatchObject({ finishReason: 'length', stopReason: null });
    expect(r.last.usage?.completionTokens).toBe(5);
  });

  it('stop cuts the text before the stop string, even across tokens, and names it', async () => {
    for (const stop of ['Lily', 'ere wa', 'ittle g']) {
      const r = await greedy({ stop });
      const at = plain.text.indexOf(stop);
      expect(r.text, stop).toBe(plain.text.slice(0, at));
      expect(r.last).toMatchObject({ finishReason: 'stop', stopReason: stop });
      // Token ids run up to the token that completed the stop string.
      const n = r.tokens.length;
      expect(r.tokens).toEqual(plain.tokens.slice(0, n));
      expect(model.detokenize(plain.tokens.slice(0, n)).includes(stop)).toBe(true);
      expect(model.detokenize(plain.tokens.slice(0, n - 1)).includes(stop)).toBe(false);
    }
  });

  it('the first stop string (in list order) that completes ends the generation', async () => {
    const r = await greedy({ stop: ['girl', 'was', 'xyz'] });
    expect(r.last.stopReason).toBe('was');
    expect(r.text).toBe(plain.text.slice(0, plain.text.indexOf('was')));
  });

  it('includeStopStrInOutput keeps the stop string and nothing after it', async () => {
    const r = await greedy({ stop: 'ere wa', includeStopStrInOutput: true });
    expect(r.text).toBe(plain.text.slice(0, plain.text.indexOf('ere wa') + 'ere wa'.length));
    expect(r.last).toMatchObject({ finishReason: 'stop', stopReason: 'ere wa' });
  });
});

describe('stopTokenIds, EOS, ignoreEos, minTokens', () => {
  it('stopTokenIds end on the token (kept in the ids), its text only with includeStopStrInOutput', async () => {
    const lily = plain.tokens[9]!; // " Lily"
    expect(plain.tokens.indexOf(lily)).toBe(9);
    expect(plain.tokens.slice(0, 10)).not.toContain(300);
    const r = await greedy({ stopTokenIds: [300, lily] });
    expect(r.tokens).toEqual(plain.tokens.slice(0, 10));
    expect(r.text).toBe(model.detokenize(plain.tokens.slice(0, 9)));
    expect(r.last).toMatchObject({ finishReason: 'stop', stopReason: lily });
    const kept = await greedy({ stopTokenIds: [lily], includeStopStrInOutput: true });
    expect(kept.tokens).toEqual(r.tokens);
    expect(kept.text).toBe(model.detokenize(plain.tokens.slice(0, 10)));
    expect(kept.text.endsWith(' Lily')).toBe(true);
  });

  it('EOS stops with stopReason null; ignoreEos keeps generating through it until maxTokens', async () => {
    const eos = await greedy({ logitBias: { [EOS]: 100 } });
    expect(eos.tokens).toEqual([EOS]);
    expect(eos.text).toBe('');
    expect(eos.last).toMatchObject({ finishReason: 'stop', stopReason: null });
    const through = await greedy({ logitBias: { [EOS]: 100 }, ignoreEos: true, maxTokens: 6 });
    expect(through.tokens).toEqual([EOS, EOS, EOS, EOS, EOS, EOS]);
    expect(through.last).toMatchObject({ finishReason: 'length', stopReason: null });
  });

  it('minTokens masks EOS (even when biased up) until that many tokens exist', async () => {
    const r = await greedy({ logitBias: { [EOS]: 100 }, minTokens: 4 });
    // EOS masked: the first four are the unbiased greedy tokens; then the bias wins.
    expect(r.tokens).toEqual([...plain.tokens.slice(0, 4), EOS]);
    expect(r.last).toMatchObject({ finishReason: 'stop', stopReason: null });
    expect(r.last.usage?.completionTokens).toBe(5);
  });

  it('minTokens also masks stopTokenIds, and stop strings do not match within the first minTokens tokens', async () => {
    const x = 300;
    const r = await greedy({ logitBias: { [x]: 100 }, stopTokenIds: [x], minTokens: 3 });
    expect(r.tokens.length).toBe(4);
    expect(r.tokens.slice(0, 3)).not.toContain(x);
    expect(r.tokens[3]).toBe(x);
    expect(r.last).toMatchObject({ finishReason: 'stop', stopReason: x });
    // " was" is the 3rd token: with minTokens 3 it cannot stop there (vLLM checks stop strings only
    // once more than min_tokens tokens exist), with minTokens 2 it does.
    const held = await greedy({ stop: ' was', minTokens: 3, maxTokens: 10 });
    expect(held.tokens).toEqual(plain.tokens.slice(0, 10));
    expect(held.last.finishReason).toBe('length');
    const stops = await greedy({ stop: ' was', minTokens: 2, maxTokens: 10 });
    expect(stops.tokens).toEqual(plain.tokens.slice(0, 3));
    expect(stops.last).toMatchObject({ finishReason: 'stop', stopReason: ' was' });
  });
});

describe('special tokens in the output', () => {
  // BOS forced up, but banned right after itself: the output alternates <s> and ordinary tokens.
  // vLLM's output text: the detokenised prompt + output, minus the detokenised prompt (its detokenizer is
  // primed with the prompt, so the first output piece keeps its SentencePiece space).
  const continuation = (out: number[], skipSpecialTokens: boolean): string =>
    model.detokenize([...prompt, ...out], { skipSpecialTokens }).slice(model.detokenize(prompt, { skipSpecialTokens }).length);
  const forced: Partial<GenerateRequest> = { logitBias: { [BOS]: 100 }, badWordsTokenIds: [[BOS, BOS]], maxTokens: 8 };

  it('the first output piece keeps its space after a prompt holding text (vLLM primes its detokenizer), not after a bare BOS', async () => {
    const onceUpon = model.tokenize('Once upon', { addSpecial: true });
    const r = await collect(engine, { promptTokens: onceUpon, maxTokens: 4, temperature: 0 });
    expect(model.tokenPiece(r.tokens[0]!).startsWith(' ')).toBe(true);
    expect(r.text.startsWith(' ')).toBe(true);
    expect(r.text).toBe(model.detokenize([...onceUpon, ...r.tokens]).slice(model.detokenize(onceUpon).length));
    const bare = await collect(engine, { promptTokens: [BOS], maxTokens: 4, temperature: 0 });
    expect(bare.text).toBe(model.detokenize(bare.tokens));
    expect(bare.text.startsWith(' ')).toBe(false);
  });

  it('skipSpecialTokens (default true) drops <s> from the text; false keeps it', async () => {
    const skipped = await greedy(forced);
    expect(skipped.tokens.filter((t) => t === BOS).length).toBe(4);
    expect(skipped.tokens.filter((t, i) => (t === BOS) !== (i % 2 === 0))).toEqual([]);
    expect(skipped.text).not.toContain('<s>');
    expect(skipped.text).toBe(continuation(skipped.tokens, true));
    expect(skipped.text.length).toBeGreaterThan(0);
    const explicit = await greedy({ ...forced, skipSpecialTokens: true });
    expect(explicit.text).toBe(skipped.text);
    const kept = await greedy({ ...forced, skipSpecialTokens: false });
    expect(kept.tokens).toEqual(skipped.tokens);
    expect(kept.text.split('<s>').length - 1).toBe(4);
    expect(kept.text).toBe(continuation(kept.tokens, false));
    // The output continues the prompt's text, so every piece keeps its space, after <s> or not.
    expect(kept.text.replaceAll('<s>', '')).toBe(skipped.text);
  });

  it('spacesBetweenSpecialTokens inserts nothing either way (vLLM fast-tokenizer behaviour) and is validated', async () => {
    const three = { logitBias: { [BOS]: 100 }, maxTokens: 3, skipSpecialTokens: false };
    const on = await greedy({ ...three, spacesBetweenSpecialTokens: true });
    const off = await greedy({ ...three, spacesBetweenSpecialTokens: false });
    expect(on.text).toBe('<s><s><s>');
    expect(off.text).toBe('<s><s><s>');
    const mixedOn = await greedy({ ...forced, skipSpecialTokens: false, spacesBetweenSpecialTokens: true });
    const mixedOff = await greedy({ ...forced, skipSpecialTokens: false, spacesBetweenSpecialTokens: false });
    expect(mixedOff.text).toBe(mixedOn.text);
    expect(() => engine.generate({ promptTokens: prompt, spacesBetweenSpecialTokens: 'yes' as unknown as boolean })).toThrow(/spacesBetweenSpecialTokens/);
  });
});

describe('xargs', () => {
  it('reaches the native request: numbers, strings and lists are accepted, other values rejected', async () => {
    // No custom processor is registered from JS, so valid xargs change nothing.
    const r = await greedy({ xargs: { k: 1, name: 'x', list: [1, 'a', 2.5] } });
    expect(r.tokens).toEqual(plain.tokens);
    expect(() => engine.generate({ promptTokens: prompt, xargs: { nested: { a: 1 } } })).toThrow(/vllm_xargs values must be numbers, strings or lists/);
    expect(() => engine.generate({ promptTokens: prompt, xargs: { b: true } })).toThrow(/vllm_xargs values/);
  });
});

describe('prompt logprobs', () => {
  it('every top-N entry equals log_softmax(Model.evaluate) at its position within 1e-4', async () => {
    const p = [...prompt, ...plain.tokens.slice(0, 12)];
    const logits = await model.evaluate(p, { threads: 1 });
    const r = await collect(engine, { promptTokens: p, maxTokens: 1, temperature: 0, promptLogprobs: 5 });
    const pl = r.events.find((e) => e.promptLogprobs)!.promptLogprobs!;
    expect(pl.length).toBe(p.length - 1);
    for (let i = 0; i < p.length - 1; i++) {
      const row = logits.subarray(i * V, (i + 1) * V);
      let max = -Infinity;
      for (const v of row) max = Math.max(max, v);
      let sum = 0;
      for (const v of row) sum += Math.exp(v - max);
      const lse = max + Math.log(sum);
      const sorted = [...row].map((v) => v - lse).sort((a, b) => b - a);
      expect(pl[i]!.top.length).toBe(5);
      pl[i]!.top.forEach((t, k) => {
        expect(Math.abs(t.logprob - (row[t.token]! - lse))).toBeLessThan(1e-4);
        expect(Math.abs(t.logprob - sorted[k]!)).toBeLessThan(1e-4);
      });
    }
  });
});

describe('token-id fields are checked against the vocabulary', () => {
  it('out-of-vocab ids fail only their request, with vLLM\'s messages; the engine keeps serving', async () => {
    const cases: [Partial<GenerateRequest>, RegExp][] = [
      [{ logitBias: { 9999: 1 } }, /token_id\(s\) \[9999\] in logit_bias contain out-of-vocab token ids/],
      [{ allowedTokenIds: [3, 9999] }, /allowed_token_ids contains out-of-vocab token id/],
      [{ allowedTokenIds: [] }, /allowed_token_ids is not None and empty/],
      [{ badWordsTokenIds: [[3, 9999]] }, /following tokens were specified as bad: \[9999\]/],
      [{ stopTokenIds: [9999] }, /token_id\(s\) \[9999\] in stop_token_ids contain out-of-vocab token ids/],
    ];
    for (const [fields, message] of cases) {
      const r = await greedy({ ...fields, maxTokens: 2 });
      expect(r.last.finishReason, JSON.stringify(fields)).toBe('error');
      expect(r.last.error?.message).toMatch(message);
      expect(r.tokens).toEqual([]);
    }
    expect((await greedy({ maxTokens: 4 })).tokens).toEqual(plain.tokens.slice(0, 4));
  });
});
