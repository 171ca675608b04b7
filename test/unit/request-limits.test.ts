// The per-request limits (lib/openai/request-limits.ts): each one is a 400 naming its field, and a
// request at each limit passes.
import { describe, expect, it } from 'vitest';
import type { TokenmillError } from '../../lib/engine/errors.js';
import { checkRequestLimits, DEFAULT_REQUEST_LIMITS, pyFloat } from '../../lib/openai/request-limits.js';
import { parseChatRequest } from '../../lib/openai/validate.js';
import { toChatInput } from '../../lib/openai/chat-input.js';

const limits = { ...DEFAULT_REQUEST_LIMITS, maxN: 8, maxLogitBias: 512 };
const messages = [{ role: 'user', content: 'hi' }];
const tool = { type: 'function', function: { name: 'f' } };

function check(patch: Record<string, unknown>): TokenmillError | null {
  try {
    const input = toChatInput(parseChatRequest({ messages, ...patch }), false);
    checkRequestLimits(input.request, input.facts, limits);
    return null;
  } catch (e) {
    return e as TokenmillError;
  }
}

const times = <T>(n: number, f: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => f(i));

describe('request limits', () => {
  it.each([
    ['n', { n: 8, temperature: 1 }, { n: 9, temperature: 1 }],
    ['stop', { stop: times(128, (i) => `s${i}`) }, { stop: times(129, (i) => `s${i}`) }],
    ['stop', { stop: ['x'.repeat(4096)] }, { stop: ['x'.repeat(4097)] }],
    ['bad_words', { bad_words: times(1024, (i) => `w${i}`) }, { bad_words: times(1025, (i) => `w${i}`) }],
    ['bad_words', { bad_words: ['x'.repeat(1024)] }, { bad_words: ['x'.repeat(1025)] }],
    ['logit_bias', { logit_bias: Object.fromEntries(times(512, (i) => [String(i), 1])) }, { logit_bias: Object.fromEntries(times(513, (i) => [String(i), 1])) }],
    ['allowed_token_ids', { allowed_token_ids: times(512, (i) => i) }, { allowed_token_ids: times(513, (i) => i % 512) }],
    ['stop_token_ids', { stop_token_ids: times(512, (i) => i) }, { stop_token_ids: times(513, (i) => i % 512) }],
    ['tools', { tools: times(128, () => tool) }, { tools: times(129, () => tool) }],
    // 4096 JSON values: the object and 4095 keys.
    ['kv_transfer_params', { kv_transfer_params: Object.fromEntries(times(4095, (i) => [`k${i}`, 1])) }, { kv_transfer_params: Object.fromEntries(times(4096, (i) => [`k${i}`, 1])) }],
    ['chat_template_kwargs', { chat_template_kwargs: { list: times(4094, (i) => i) } }, { chat_template_kwargs: { list: times(4095, (i) => i) } }],
    ['documents', { documents: times(1024, () => ({})) }, { documents: times(1025, () => ({})) }],
    ['structured_outputs.grammar', { structured_outputs: { grammar: 'x'.repeat(256 * 1024) } }, { structured_outputs: { grammar: 'x'.repeat(256 * 1024 + 1) } }],
    ['structured_outputs.regex', { structured_outputs: { regex: 'x'.repeat(256 * 1024) } }, { structured_outputs: { regex: 'x'.repeat(256 * 1024 + 1) } }],
    ['response_format.json_schema', { response_format: { type: 'json_schema', json_schema: { name: 'n', schema: { d: 'x'.repeat(1000) } } } }, { response_format: { type: 'json_schema', json_schema: { name: 'n', schema: { d: 'x'.repeat(256 * 1024) } } } }],
    ['structured_outputs.choice', { structured_outputs: { choice: times(16384, (i) => `${i}`) } }, { structured_outputs: { choice: times(16385, (i) => `${i}`) } }],
  ] as const)('%s: at the limit passes, past it is a 400 naming the field', (field, ok, over) => {
    expect(check(ok as Record<string, unknown>)).toBeNull();
    const e = check(over as Record<string, unknown>);
    expect(e?.status).toBe(400);
    expect(e?.param).toBe(field);
  });

  it('engine ranges: temperature over 2 and repetition_penalty past float32-safe values are 400s in vLLM\'s wording', () => {
    expect(check({ temperature: 3 })?.message).toBe('temperature must be in [0, 2], got 3.0.');
    expect(check({ repetition_penalty: 1e300 })?.message).toBe('repetition_penalty must be in [1e-30, 1e+30], got 1e+300.');
    expect(check({ temperature: 2, repetition_penalty: 1e30, top_p: 1e-300 })).toBeNull();
  });

  it('pyFloat prints as Python\'s repr', () => {
    expect([65536, 1e300, 1e-300, 1e-7, 0.5, 1e16, 1e15, -2, 0.0001, 2.000001].map(pyFloat))
      .toEqual(['65536.0', '1e+300', '1e-300', '1e-07', '0.5', '1e+16', '1000000000000000.0', '-2.0', '0.0001', '2.000001']);
  });
});
