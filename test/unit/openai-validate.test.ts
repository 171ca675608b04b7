import { describe, expect, it } from 'vitest';
import {
  parseChatRequest, parseJsonBody, RequestValidationError, validateChatRequest, validateTrajectoryLog,
} from '../../lib/openai/validate.js';

const msgs = [{ role: 'user', content: 'hi' }];
const bad = (body: unknown) => {
  const r = validateChatRequest(body);
  if (r.ok) throw new Error('expected a validation failure');
  return r.detail;
};

describe('openai validate: chat request', () => {
  it('accepts a minimal body and applies the seed defaults', () => {
    const r = validateChatRequest({ messages: msgs, model: 'm' });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value.n).toBe(1);
    expect(r.value.stop).toEqual([]);
    expect(r.value.add_generation_prompt).toBe(true);
    expect(r.value.include_reasoning).toBe(true);
    expect(r.value.priority).toBe(0);
    expect(r.value.request_id).toMatch(/^[0-9a-f]{32}$/);
    expect(validateChatRequest({ messages: msgs, stop: 'x' }).ok && parseChatRequest({ messages: msgs, stop: 'x' }).stop).toEqual(['x']);
  });

  it('reports every violation at once with FastAPI types, messages and integer list indexes', () => {
    const d = bad({ messages: [{ content: 'x' }, { role: 5, content: 'y' }], temperature: -1, top_p: 0, n: 'two', stream: 'yes', seed: 1.5 });
    expect(d).toEqual(expect.arrayContaining([
      { loc: ['body', 'messages', 0, 'role'], msg: 'Field required', type: 'missing' },
      { loc: ['body', 'messages', 1, 'role'], msg: 'Input should be a valid string', type: 'string_type' },
      { loc: ['body', 'temperature'], msg: 'Input should be greater than or equal to 0', type: 'greater_than_equal' },
      { loc: ['body', 'top_p'], msg: 'Input should be greater than 0', type: 'greater_than' },
      { loc: ['body', 'n'], msg: 'Input should be a valid integer', type: 'int_type' },
      { loc: ['body', 'stream'], msg: 'Input should be a valid boolean', type: 'bool_type' },
      { loc: ['body', 'seed'], msg: 'Input should be a valid integer, got a number with a fractional part', type: 'int_from_float' },
    ]));
    expect(d).toHaveLength(7);
  });

  it('requires messages and reports ranges of the Limits table', () => {
    expect(bad({})).toEqual([{ loc: ['body', 'messages'], msg: 'Field required', type: 'missing' }]);
    expect(bad({ messages: msgs, truncate_prompt_tokens: -2 })).toEqual([
      { loc: ['body', 'truncate_prompt_tokens'], msg: 'Input should be greater than or equal to -1', type: 'greater_than_equal' },
    ]);
    expect(bad({ messages: msgs, seed: 1e20 })).toEqual([
      { loc: ['body', 'seed'], msg: 'Input should be less than or equal to 9223372036854775807', type: 'less_than_equal' },
    ]);
    expect(validateChatRequest({ messages: msgs, seed: -(2 ** 62), truncate_prompt_tokens: -1 }).ok).toBe(true);
    expect(bad({ messages: msgs, top_p: 1.5 })[0]!.type).toBe('less_than_equal');
    expect(bad({ messages: msgs, n: 0 })[0]).toEqual({ loc: ['body', 'n'], msg: 'Input should be greater than or equal to 1', type: 'greater_than_equal' });
    expect(bad({ messages: msgs, temperature: 'hot' })[0]).toEqual({ loc: ['body', 'temperature'], msg: 'Input should be a valid number', type: 'float_type' });
  });

  it('literal fields: tool_choice only "none", reasoning_effort low|medium|high', () => {
    expect(bad({ messages: msgs, tool_choice: 'auto' })).toEqual([{ loc: ['body', 'tool_choice'], msg: "Input should be 'none'", type: 'literal_error' }]);
    expect(bad({ messages: msgs, reasoning_effort: 'max' })).toEqual([
      { loc: ['body', 'reasoning_effort'], msg: "Input should be 'low', 'medium' or 'high'", type: 'literal_error' },
    ]);
    expect(validateChatRequest({ messages: msgs, tool_choice: 'none', reasoning_effort: 'low' }).ok).toBe(true);
  });

  it('unions report one error per branch, pydantic style', () => {
    expect(bad({ messages: msgs, stop: 5 })).toEqual([
      { loc: ['body', 'stop', 'str'], msg: 'Input should be a valid string', type: 'string_type' },
      { loc: ['body', 'stop', 'list[str]'], msg: 'Input should be a valid list', type: 'list_type' },
    ]);
    expect(bad({ messages: msgs, stop: ['a', 3] })).toContainEqual(
      { loc: ['body', 'stop', 'list[str]', 1], msg: 'Input should be a valid string', type: 'string_type' });
  });

  it('unknown top-level fields are ignored and reported', () => {
    const r = validateChatRequest({ messages: msgs, frobnicate: 1, another: 'x' });
    expect(r.ok).toBe(true);
    expect(r.ignoredFields).toEqual(['frobnicate', 'another']);
  });

  it('cross-field rules are value_errors at ["body"]', () => {
    const v = (msg: string) => ({ loc: ['body'], msg: `Value error, ${msg}`, type: 'value_error' });
    expect(bad({ messages: msgs, continue_final_message: true })).toEqual([
      v('Cannot set both `continue_final_message` and `add_generation_prompt` to True.')]);
    expect(validateChatRequest({ messages: msgs, continue_final_message: true, add_generation_prompt: false }).ok).toBe(true);
    expect(bad({ messages: msgs, stream_options: {} })).toEqual([v('Stream options can only be defined when `stream=True`.')]);
    expect(bad({ messages: msgs, stream: true, stream_options: { continuous_usage_stats: true } })).toEqual([
      v('`continuous_usage_stats` requires `include_usage` to be true.')]);
    expect(bad({ messages: msgs, n: 2, temperature: 0 })).toEqual([v('n must be 1 when using greedy sampling, got 2.')]);
    expect(validateChatRequest({ messages: msgs, n: 2, temperature: 0, use_beam_search: true }).ok).toBe(true);
    expect(bad({ messages: msgs, top_logprobs: 3 })).toEqual([v('when using `top_logprobs`, `logprobs` must be set to true.')]);
    expect(bad({ messages: msgs, logprobs: true, top_logprobs: 21 })).toEqual([
      v('Requested sample logprobs of 21, which is greater than max allowed: 20')]);
    expect(validateChatRequest({ messages: msgs, logprobs: true, top_logprobs: 21 }, { maxLogprobs: 30 }).ok).toBe(true);
    expect(bad({ messages: msgs, logprobs: true, top_logprobs: -2 })[0]!.type).toBe('greater_than_equal');
    expect(bad({ messages: msgs, stream: true, prompt_logprobs: 1 })).toEqual([
      v('`prompt_logprobs` are not available when `stream=True`.')]);
    expect(validateChatRequest({ messages: msgs, prompt_logprobs: 1 }).ok).toBe(true);
    expect(bad({ messages: msgs, repetition_detection: { max_pattern_size: 4, min_count: 1 } })).toEqual([
      v('repetition_detection.min_count must be at least 2 when max_pattern_size > 0, got 1.')]);
    expect(bad({ messages: msgs, repetition_detection: { max_pattern_size: 2, min_pattern_size: 3, min_count: 2 } })).toHaveLength(1);
    expect(validateChatRequest({ messages: msgs, repetition_detection: { max_pattern_size: 4, min_count: 2 } }).ok).toBe(true);
    expect(bad({ messages: msgs, stop: ['a', ''] })).toEqual([v('stop cannot contain an empty string.')]);
    expect(bad({ messages: msgs, logit_bias: { abc: 1 } })[0]!.type).toBe('value_error');
    expect(bad({ messages: msgs, max_tokens: 2, min_tokens: 3 })).toHaveLength(1);
  });

  it('messages: roles, content parts, tool calls', () => {
    const ok = validateChatRequest({ messages: [
      { role: 'developer', content: 'd' },
      { role: 'system', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] },
      { role: 'user', content: 'u', name: 'bob' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
      { role: 'tool', content: '42', tool_call_id: 'c1' },
      { role: 'function', name: 'f', content: 'x' },
      { role: 'critic', content: 'custom role' },
    ] });
    expect(ok.ok).toBe(true);
    const d = bad({ messages: [
      { role: 'user' },
      { role: 'user', content: [{ type: 'image_url', image_url: { url: 'x' } }] },
      { role: 'assistant', tool_calls: [{ id: 'c', function: { name: 'f' } }] },
    ] });
    expect(d).toEqual(expect.arrayContaining([
      { loc: ['body', 'messages', 0, 'content'], msg: 'Field required', type: 'missing' },
      { loc: ['body', 'messages', 2, 'tool_calls', 0, 'function', 'arguments'], msg: 'Field required', type: 'missing' },
    ]));
    // A non-text part is well-formed: the 400 for text-only models comes later (content-parts.ts).
    expect(d.some((x) => x.loc[2] === 1)).toBe(false);
  });

  it('non-object bodies and bad JSON', () => {
    expect(bad([1])).toEqual([{ loc: ['body'], msg: 'Input should be a valid dictionary or object to extract fields from', type: 'model_attributes_type' }]);
    const j = parseJsonBody('{"a": 1,}');
    expect(j.ok).toBe(false);
    if (!j.ok) expect(j.detail).toEqual([{ loc: ['body', 8], msg: 'JSON decode error', type: 'json_invalid' }]);
    const k = parseJsonBody('{"messages": [}');
    expect(!k.ok && typeof k.detail[0]!.loc[1]).toBe('number');
    expect(() => parseChatRequest({})).toThrow(RequestValidationError);
    try { parseChatRequest({}); } catch (e) { expect((e as RequestValidationError).status).toBe(422); }
  });
});

describe('openai validate: trajectory log', () => {
  it('fills ART defaults and keeps extra fields', () => {
    const r = validateTrajectoryLog({
      model_id: 'm', split: 'val',
      trajectory_groups: [{ trajectories: [{ reward: 1, messages_and_choices: [{ role: 'user', content: 'x' },
        { index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'y' }, logprobs: null }], extra: 1 }, {}],
      exceptions: [{ type: 'E', message: 'm', traceback: 't' }], custom_group_field: true }],
    });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const t = r.value.trajectory_groups[0]!.trajectories[1]!;
    expect(t).toEqual({ messages_and_choices: [], tools: null, additional_histories: [], reward: 0, initial_policy_version: null,
      final_policy_version: null, metrics: {}, metadata: {}, logs: [] });
    expect((r.value.trajectory_groups[0]!.trajectories[0] as Record<string, unknown>).extra).toBe(1);
    expect((r.value.trajectory_groups[0] as Record<string, unknown>).custom_group_field).toBe(true);
    expect(r.value.model_id).toBe('m');
  });
  it('requires split and trajectory_groups, types are checked', () => {
    const r = validateTrajectoryLog({ trajectory_groups: [{ trajectories: [{ reward: 'high', logs: [1] }] }] });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.detail).toEqual([
      { loc: ['body', 'split'], msg: 'Field required', type: 'missing' },
      { loc: ['body', 'trajectory_groups', 0, 'trajectories', 0, 'reward'], msg: 'Input should be a valid number', type: 'float_type' },
      { loc: ['body', 'trajectory_groups', 0, 'trajectories', 0, 'logs', 0], msg: 'Input should be a valid string', type: 'string_type' },
    ]);
  });
});
