import { describe, expect, it } from 'vitest';
import { buildChatResponse, systemFingerprint } from '../../lib/openai/assemble.js';
import type { AssembleOptions } from '../../lib/openai/assemble.js';
import { ChatStreamAssembler, sse, SSE_DONE } from '../../lib/openai/assemble-stream.js';
import { clampLogprob, formatLogprobEntry, formatPromptLogprobs, tokenText } from '../../lib/openai/logprobs.js';

const enc = (s: string) => [...new TextEncoder().encode(s)];
const base: AssembleOptions = {
  requestId: 'abc', model: 'm', created: 1700000000, systemFingerprint: 'tokenmill-0.1.0-0123456789ab', role: 'assistant',
  toolParser: null, reasoningParser: null,
};
const usage = { promptTokens: 5, completionTokens: 3, cachedTokens: 2 };

describe('openai logprobs', () => {
  it('clamps -inf, writes bytes:\\xNN for partial UTF-8, token_id:<id> when asked', () => {
    expect(clampLogprob(-Infinity)).toBe(-9999.0);
    expect(clampLogprob(-0.5)).toBe(-0.5);
    expect(tokenText(enc(' there'))).toBe(' there');
    expect(tokenText([0xe2, 0x80])).toBe('bytes:\\xe2\\x80');
    const e = formatLogprobEntry({ id: 7, bytes: [0xe2, 0x80], logprob: -Infinity, top: [{ id: 8, bytes: enc('a'), logprob: -1 }] });
    expect(e).toEqual({ token: 'bytes:\\xe2\\x80', logprob: -9999, bytes: [0xe2, 0x80], top_logprobs: [{ token: 'a', logprob: -1, bytes: [97] }] });
    const t = formatLogprobEntry({ id: 7, bytes: enc('x'), logprob: -2, top: [{ id: 9, bytes: enc('y'), logprob: -3 }] }, { returnTokensAsTokenIds: true });
    expect(t).toEqual({ token: 'token_id:7', logprob: -2, bytes: enc('token_id:7'), top_logprobs: [{ token: 'token_id:9', logprob: -3, bytes: enc('token_id:9') }] });
    expect(formatPromptLogprobs([null, [{ id: 3, logprob: -Infinity, rank: 1, text: 'a' }]])).toEqual([null, { 3: { logprob: -9999, rank: 1, decoded_token: 'a' } }]);
  });
});

describe('openai assemble: non-stream', () => {
  it('builds the chat.completion shape', () => {
    const r = buildChatResponse([{ index: 0, text: 'Hello', tokenIds: [1, 2, 3], finishReason: 'stop', stopReason: null }], usage,
      { ...base, returnTokenIds: true, promptTokenIds: [9, 9], kvTransferParams: { a: 1 } });
    expect(r).toEqual({
      id: 'chatcmpl-abc', object: 'chat.completion', created: 1700000000, model: 'm',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hello', refusal: null, annotations: null, audio: null, function_call: null },
        logprobs: null, finish_reason: 'stop', stop_reason: null, token_ids: [1, 2, 3] }],
      usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8, prompt_tokens_details: { cached_tokens: 2 } },
      service_tier: null, system_fingerprint: 'tokenmill-0.1.0-0123456789ab', prompt_logprobs: null, prompt_token_ids: [9, 9], kv_transfer_params: { a: 1 },
    });
    expect(systemFingerprint('0.1.0', '0123456789abcdef')).toBe('tokenmill-0.1.0-0123456789ab');
  });

  it('reasoning then tool calls; include_reasoning false drops reasoning; echo prepends', () => {
    const text = '<think>need weather</think>\n<tool_call>\n{"name": "w", "arguments": {"c": "P"}}\n</tool_call>';
    const opts = { ...base, reasoningParser: 'qwen3' as const, toolParser: 'hermes' as const };
    const r = buildChatResponse([{ index: 0, text, tokenIds: [1], finishReason: 'stop' }], usage, opts);
    const c = r.choices[0]!;
    expect(c.finish_reason).toBe('tool_calls');
    expect(c.message.reasoning).toBe('need weather');
    expect(c.message.content).toBeNull();
    expect(c.message.tool_calls).toEqual([{ id: expect.stringMatching(/^call_[A-Za-z0-9]{24}$/), type: 'function', function: { name: 'w', arguments: '{"c": "P"}' } }]);
    const hidden = buildChatResponse([{ index: 0, text, tokenIds: [1], finishReason: 'stop' }], usage, { ...opts, includeReasoning: false });
    expect('reasoning' in hidden.choices[0]!.message).toBe(false);
    const none = buildChatResponse([{ index: 0, text, tokenIds: [1], finishReason: 'stop' }], usage, { ...opts, toolChoice: 'none' });
    expect(none.choices[0]!.finish_reason).toBe('stop');
    expect(none.choices[0]!.message.content).toContain('<tool_call>');
    const echo = buildChatResponse([{ index: 0, text: ' world', tokenIds: [1], finishReason: 'length' }], usage, { ...base, echo: 'Hello' });
    expect(echo.choices[0]!.message.content).toBe('Hello world');
    expect(echo.choices[0]!.finish_reason).toBe('length');
  });

  it('logprobs and n choices in index order', () => {
    const lp = [{ id: 1, bytes: enc('Hi'), logprob: -0.1, top: [] }];
    const r = buildChatResponse([
      { index: 1, text: 'B', tokenIds: [2], finishReason: 'repetition', stopReason: 'repetition_detected', logprobs: lp },
      { index: 0, text: 'A', tokenIds: [1], finishReason: 'stop', stopReason: 13, logprobs: lp },
    ], usage, { ...base, logprobs: true });
    expect(r.choices.map((c) => [c.index, c.finish_reason, c.stop_reason])).toEqual([[0, 'stop', 13], [1, 'repetition', 'repetition_detected']]);
    expect(r.choices[0]!.logprobs).toEqual({ content: [{ token: 'Hi', logprob: -0.1, bytes: enc('Hi'), top_logprobs: [] }] });
  });
});

describe('openai assemble: stream', () => {
  it('role chunk first (with prompt_token_ids), content chunks, finish on the last, usage chunk', () => {
    const s = new ChatStreamAssembler({ ...base, n: 1, promptTokens: 5, includeUsage: true, returnTokenIds: true, promptTokenIds: [4, 5] });
    const chunks = [
      ...s.start(),
      ...s.push({ index: 0, text: 'Hel', tokenIds: [1] }),
      ...s.push({ index: 0, text: '', tokenIds: [] }),
      ...s.push({ index: 0, text: 'lo', tokenIds: [2], finishReason: 'stop', stopReason: null }),
      ...s.end(usage),
    ];
    expect(chunks).toHaveLength(4);
    expect(chunks[0]).toEqual({ id: 'chatcmpl-abc', object: 'chat.completion.chunk', created: 1700000000, model: 'm', system_fingerprint: 'tokenmill-0.1.0-0123456789ab',
      choices: [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }], prompt_token_ids: [4, 5] });
    expect(chunks[1]!.choices[0]).toEqual({ index: 0, delta: { content: 'Hel' }, logprobs: null, finish_reason: null, token_ids: [1] });
    expect('prompt_token_ids' in chunks[1]!).toBe(false);
    expect(chunks[2]!.choices[0]).toEqual({ index: 0, delta: { content: 'lo' }, logprobs: null, finish_reason: 'stop', stop_reason: null, token_ids: [2] });
    expect(chunks[3]).toMatchObject({ choices: [], usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8, prompt_tokens_details: { cached_tokens: 2 } } });
    expect(sse({ a: 1 })).toBe('data: {"a":1}\n\n');
    expect(SSE_DONE).toBe('data: [DONE]\n\n');
  });

  it('empty final delta, continuous usage, echo chunk, n=2 interleaved', () => {
    const s = new ChatStreamAssembler({ ...base, n: 2, promptTokens: 5, includeUsage: true, continuousUsageStats: true, echo: 'Pre' });
    const start = s.start();
    expect(start.map((c) => c.choices[0]!.delta)).toEqual([{ role: 'assistant', content: '' }, { role: 'assistant', content: '' }, { content: 'Pre' }, { content: 'Pre' }]);
    expect(start[0]!.usage).toEqual({ prompt_tokens: 5, completion_tokens: 0, total_tokens: 5 });
    const a = s.push({ index: 1, text: 'x', tokenIds: [1, 2] });
    expect(a[0]!.usage).toEqual({ prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 });
    const fin = s.push({ index: 1, text: '', tokenIds: [3], finishReason: 'length' });
    expect(fin[0]!.choices[0]).toMatchObject({ index: 1, delta: {}, finish_reason: 'length' });
    expect(() => s.push({ index: 1, text: 'late', tokenIds: [] })).toThrow(RangeError);
  });

  it('streams reasoning and tool calls without leaking markup; finish_reason tool_calls', () => {
    const s = new ChatStreamAssembler({ ...base, n: 1, promptTokens: 1, reasoningParser: 'qwen3', toolParser: 'hermes' });
    const text = '<think>hmm</think>\n\n<tool_call>\n{"name": "w", "arguments": {"c": 1}}\n</tool_call>';
    const chunks = s.start();
    for (let i = 0; i < text.length; i += 4) chunks.push(...s.push({ index: 0, text: text.slice(i, i + 4), tokenIds: [i] }));
    chunks.push(...s.push({ index: 0, text: '', tokenIds: [], finishReason: 'stop' }));
    const deltas = chunks.map((c) => c.choices[0]!.delta);
    expect(deltas.map((d) => d.reasoning ?? '').join('')).toBe('hmm');
    expect(deltas.map((d) => d.content ?? '').join('').trim()).toBe('');
    const calls = deltas.flatMap((d) => d.tool_calls ?? []);
    expect(calls[0]).toMatchObject({ index: 0, type: 'function', function: { name: 'w', arguments: '' } });
    expect(calls.map((c) => c.function.arguments ?? '').join('')).toBe('{"c": 1}');
    expect(chunks[chunks.length - 1]!.choices[0]!.finish_reason).toBe('tool_calls');
    for (const d of deltas) expect(JSON.stringify(d)).not.toMatch(/think>|tool_call>/);
  });
});
