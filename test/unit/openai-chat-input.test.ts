// A validated chat request split for the pipeline (lib/openai/chat-input.ts): the facts about its
// conversation equal what walking the messages gives, packing keeps the conversation exactly, and a
// template may hold lists as long as the conversation it renders (more messages than the render's
// list limit render).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { conversationItems, conversationParts, packConversation } from '../../lib/chat/conversation.js';
import { renderChatTemplate, renderTimeMs } from '../../lib/chat/template.js';
import { chatInputFromText, echoText, nestingDepth, responseRole, toChatInput } from '../../lib/openai/chat-input.js';
import { parseChatRequest } from '../../lib/openai/validate.js';
import { DEFAULT_REQUEST_LIMITS } from '../../lib/openai/request-limits.js';
import { INLINE_BODY_BYTES, parseRequestBody } from '../../lib/openai/parse-body.js';
import { configureWorkPool, workPool } from '../../lib/workers/offload.js';

const tool = (name: string) => ({ type: 'function', function: { name, parameters: { type: 'object', properties: { a: { type: 'string' } } } } });

describe('chat input: facts about the conversation', () => {
  it('response role and echo come from the last message', () => {
    const input = toChatInput(parseChatRequest({ messages: [{ role: 'user', content: 'q' }, { role: 'assistant', content: [{ type: 'text', text: 'pre' }, { type: 'text', text: 'fix' }] }], echo: true }), false);
    expect(responseRole(input.facts, true)).toBe('assistant');
    expect(responseRole(input.facts, true, 'bot')).toBe('bot');
    expect(responseRole(input.facts, false)).toBe('assistant');
    expect(echoText(input.facts, 'assistant')).toBe('pre\nfix');
    expect(echoText(input.facts, 'user')).toBe('');
    const user = toChatInput(parseChatRequest({ messages: [{ role: 'user', content: 'q' }] }), false);
    expect(responseRole(user.facts, false)).toBe('user');
    // Without echo the last text is not kept (it may be megabytes).
    expect(user.facts.lastText).toBeNull();
  });

  it('counts, tool names, nesting depth and the first non-text part', () => {
    const r = parseChatRequest({
      messages: [
        { role: 'system', content: [{ type: 'image_url' }] },
        { role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'input_audio' }] },
        { role: 'user', content: [{ type: 'video_url' }] },
      ],
      tools: [tool('f'), tool('g')],
      documents: [{ a: { b: [1] } }],
    });
    const { facts, request } = toChatInput(r, false);
    expect(facts).toMatchObject({ tools: 2, documents: 1, toolNames: ['f', 'g'], nonTextPart: { index: 1, type: 'input_audio' } });
    expect(facts.depth).toEqual({ messages: nestingDepth(r.messages), tools: nestingDepth(r.tools), documents: 4 });
    expect(facts.depth.tools).toBe(6); // list > tool > function > parameters > properties > a
    expect(request).not.toHaveProperty('messages');
    expect(nestingDepth(null)).toBe(0);
    expect(nestingDepth([])).toBe(1);
  });

  it('a request-sized tool list is not copied as names (the limits refuse it anyway)', () => {
    const n = DEFAULT_REQUEST_LIMITS.maxTools + 1;
    const { facts } = toChatInput(parseChatRequest({ messages: [{ role: 'user', content: 'x' }], tools: Array.from({ length: n }, (_, i) => tool(`t${i}`)) }), false);
    expect(facts.tools).toBe(n);
    expect(facts.toolNames).toBeNull();
  });
});

describe('chat input: packed conversations', () => {
  it('a body parsed with packing gives the same request, facts and conversation as inline', () => {
    const body = JSON.stringify({ messages: [{ role: 'user', content: 'héllo \u{1F600}', name: 'n', extra: { keep: [1, null] } }, { role: 'assistant', content: null, tool_calls: [{ id: 'c', function: { name: 'f', arguments: '{"a":1}' } }] }], tools: [tool('f')], documents: [{ title: 't' }], temperature: 0.5 });
    const inline = chatInputFromText(body, {}, false);
    const packed = chatInputFromText(body, {}, true);
    if (!inline.ok || !packed.ok) throw new Error('the body is valid');
    expect(packed.value.conversation).toHaveProperty('packed');
    expect(packed.value.conversation).not.toHaveProperty('inline');
    expect(conversationParts(packed.value.conversation)).toEqual(conversationParts(inline.value.conversation));
    const { request_id: _a, ...a } = packed.value.request;
    const { request_id: _b, ...b } = inline.value.request;
    expect(a).toEqual(b);
    expect(packed.value.facts).toEqual(inline.value.facts);
  });

  it('the packed bytes own their buffer (they are transferred between threads)', () => {
    const { packed } = packConversation({ messages: [{ role: 'user', content: 'x' }], tools: null, documents: null });
    expect(packed.byteOffset).toBe(0);
    expect(packed.byteLength).toBe(packed.buffer.byteLength);
  });

  it('a free-form field over its limit is left out of a packed input (refused anyway), and the facts say so either way', () => {
    const body = JSON.stringify({ messages: [{ role: 'user', content: 'x' }], kv_transfer_params: Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`k${i}`, i])), vllm_xargs: { a: 1 } });
    const inline = chatInputFromText(body, {}, false);
    const packed = chatInputFromText(body, {}, true);
    if (!inline.ok || !packed.ok) throw new Error('the body is valid');
    expect(inline.value.facts.oversized).toEqual({ field: 'kv_transfer_params', values: 5001 });
    expect(packed.value.facts.oversized).toEqual(inline.value.facts.oversized);
    expect(inline.value.request.kv_transfer_params).toBeDefined();
    expect(packed.value.request).not.toHaveProperty('kv_transfer_params');
    expect(packed.value.request.vllm_xargs).toEqual({ a: 1 });
  });

  it('token-id fields longer than the largest vocabulary are left out of a packed input; the facts keep their sizes', () => {
    const ids = Array.from({ length: 600 }, (_, i) => i % 500);
    const body = JSON.stringify({ messages: [{ role: 'user', content: 'x' }], allowed_token_ids: ids, stop_token_ids: ids.slice(0, 400), logit_bias: Object.fromEntries(ids.map((_, i) => [String(i), 1])) });
    const inline = chatInputFromText(body, {}, false, 500);
    const packed = chatInputFromText(body, {}, true, 500);
    if (!inline.ok || !packed.ok) throw new Error('the body is valid');
    expect(packed.value.facts.ids).toEqual({ allowed_token_ids: 600, stop_token_ids: 400, logit_bias: 600 });
    expect(inline.value.facts.ids).toEqual(packed.value.facts.ids);
    expect(packed.value.request).not.toHaveProperty('allowed_token_ids');
    expect(packed.value.request).not.toHaveProperty('logit_bias');
    expect(packed.value.request.stop_token_ids).toHaveLength(400);
    expect(inline.value.request.allowed_token_ids).toHaveLength(600);
  });

  it('a 422 is the same either way', () => {
    const body = JSON.stringify({ messages: [{ role: 'nobody' }, 5], temperature: 'hot' });
    expect(chatInputFromText(body, {}, true)).toEqual(chatInputFromText(body, {}, false));
  });
});

describe('chat input: token-id fields as typed arrays', () => {
  beforeAll(() => configureWorkPool({ size: 1, perClient: 1, memoryMb: 256 }));
  afterAll(() => workPool().close());

  it('logit_bias: ids in the object\'s key order (repeats kept), biases clamped, as float32', () => {
    const r = toChatInput(parseChatRequest({ messages: [{ role: 'user', content: 'x' }], logit_bias: { ' 5': 300, 7: 0.1, '5': -1, ' 99999999999 ': 2 }, stop_token_ids: [4, 2 ** 40], allowed_token_ids: [3] }), false).request;
    expect(r.logit_bias!.ids).toEqual(Float64Array.of(5, 7, 5, 99999999999));
    expect(r.logit_bias!.bias).toEqual(Float32Array.of(-1, 0.1, 100, 2));
    expect(r.stop_token_ids).toEqual(Float64Array.of(4, 2 ** 40));
    expect(r.allowed_token_ids).toEqual(Float64Array.of(3));
  });

  it('a large body comes back from the parse worker with its token-id fields as typed arrays, equal to the inline ones', async () => {
    const vocab = 262_144;
    const ids = Array.from({ length: vocab }, (_, i) => i);
    const fields = { logit_bias: Object.fromEntries(ids.map((i) => [String(i), (i % 401) / 2 - 100])), allowed_token_ids: ids, stop_token_ids: ids.slice(0, 1000) };
    const body = new TextEncoder().encode(JSON.stringify({ messages: [{ role: 'user', content: 'x' }], ...fields }));
    expect(body.byteLength).toBeGreaterThan(INLINE_BODY_BYTES);
    const parsed = await parseRequestBody('chat', body, { maxLogprobs: 20, client: 't', transfer: true, maxIds: vocab });
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.detail));
    const inline = chatInputFromText(JSON.stringify({ messages: [{ role: 'user', content: 'x' }], ...fields }), {}, false);
    if (!inline.ok) throw new Error('valid');
    const got = parsed.value.request;
    expect(got.logit_bias!.ids).toBeInstanceOf(Float64Array);
    expect(got.logit_bias!.bias).toBeInstanceOf(Float32Array);
    expect(got.allowed_token_ids).toBeInstanceOf(Float64Array);
    expect(got.logit_bias!.ids).toHaveLength(vocab);
    expect(got.logit_bias).toEqual(inline.value.request.logit_bias);
    expect(got.allowed_token_ids).toEqual(inline.value.request.allowed_token_ids);
    expect(got.stop_token_ids).toEqual(inline.value.request.stop_token_ids);
    expect(body.byteLength).toBe(0); // the body's bytes were transferred to the worker, not copied
  }, 60_000);
});

describe('chat template: lists as long as the conversation', () => {
  it('more messages than the list limit render, sliced and reversed; a longer list the template builds is still refused', () => {
    const messages = Array.from({ length: 300 }, (_, i) => ({ role: 'user', content: String(i) }));
    const limits = { maxItems: 100 };
    const out = renderChatTemplate({ template: '{{ messages | length }} {{ (messages[1:] | reverse | list)[0].content }}', messages, limits });
    expect(out).toBe('300 299');
    expect(() => renderChatTemplate({ template: '{{ (messages + messages) | length }}', messages, limits })).toThrow(/list longer than 300 items/);
    expect(() => renderChatTemplate({ template: '{{ range(301) | length }}', messages, limits })).toThrow(/range\(\) of 301 items exceeds the limit of 300/);
  });
});

describe('chat template: time for long conversations', () => {
  it('a render gets time in proportion to the conversation (none for a short one), counted the same packed or inline', () => {
    expect(renderTimeMs(2000, 1)).toBe(2000);
    expect(renderTimeMs(2000, 270_000)).toBe(7400);
    const parts = { messages: Array.from({ length: 3 }, () => ({ role: 'user', content: 'x' })), tools: [tool('f') as never], documents: [{}] };
    expect(conversationItems({ inline: parts })).toBe(5);
    expect(conversationItems(packConversation(parts))).toBe(5);
  });
});
