// use_beam_search through engine.chat / engine.chatStream on stories260K: n choices, best first, equal
// to the engine-level beam search of the same prompt; streaming yields the whole result at the end.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { Engine, Model } from '../../lib/index.js';
import type { ChatCompletionChunk } from '../../lib/index.js';
import { stories260K } from '../helpers/shared.js';

const TEMPLATE = '{% for m in messages %}{{ m.content }}{% endfor %}';

let model: Model;
let engine: Engine;

beforeAll(async () => {
  model = await Model.load(stories260K);
  engine = await Engine.create(model, { kvCacheMemory: 4 << 20, threads: 1 });
});

afterAll(async () => {
  await engine.close();
});

function req(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    messages: [{ role: 'user', content: 'Once upon a time, there was a little girl named' }],
    chat_template: TEMPLATE,
    add_special_tokens: true,
    use_beam_search: true,
    n: 4,
    temperature: 0,
    max_completion_tokens: 6,
    ...extra,
  };
}

describe('chat use_beam_search', () => {
  test('returns n choices sorted by score, equal to the engine-level beam search', async () => {
    const res = await engine.chat(req());
    expect(res.choices.map((c) => c.index)).toEqual([0, 1, 2, 3]);
    const prompt = model.tokenize('Once upon a time, there was a little girl named');
    const direct: { tokens: number[]; text: string; cum: number }[] = [];
    for await (const ev of engine.generate({ promptTokens: prompt, n: 4, maxTokens: 6, useBeamSearch: true, temperature: 0 })) {
      direct.push({ tokens: ev.tokenIds, text: ev.text, cum: ev.cumLogprob! });
    }
    expect(res.choices.map((c) => c.message.content)).toEqual(direct.map((d) => d.text));
    expect(new Set(res.choices.map((c) => c.message.content)).size).toBe(4);
    for (const c of res.choices) expect(c.finish_reason).toBe('length');
    // all beams have 6 tokens: score order is cum_logprob order
    for (let i = 1; i < direct.length; i++) expect(direct[i]!.cum).toBeLessThanOrEqual(direct[i - 1]!.cum);
    expect(res.usage).toMatchObject({ prompt_tokens: prompt.length, completion_tokens: 24 });
  });

  test('n = 12 (no n ≤ 10 limit) and n > 1 at temperature 0 are accepted', async () => {
    const res = await engine.chat(req({ n: 12, max_completion_tokens: 2 }));
    expect(res.choices.length).toBe(12);
  });

  test('streaming yields the same choices, all at the end', async () => {
    const whole = await engine.chat(req());
    const chunks: ChatCompletionChunk[] = [];
    for await (const c of engine.chatStream(req())) {
      if ('error' in c) throw new Error(c.error.message);
      chunks.push(c);
    }
    for (let i = 0; i < 4; i++) {
      const text = chunks.flatMap((c) => c.choices).filter((c) => c.index === i).map((c) => c.delta.content ?? '').join('');
      expect(text).toBe(whole.choices[i]!.message.content);
    }
    const stats = engine.stats();
    expect(stats.kvBlocksFree).toBe(stats.kvBlocksTotal);
  });
});
