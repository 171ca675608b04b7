import { describe, expect, it } from 'vitest';
import {
  detectToolParser, extractToolCalls, makeToolCallId, ToolCallStream, ToolCallStreamParser,
} from '../../lib/chat/tool-parser.js';
import type { ToolParserName } from '../../lib/chat/tool-parser.js';
import type { DeltaToolCall } from '../../lib/openai/protocol.js';
import { readTemplate } from './chat-fixtures.js';

/** Streams `text` in pieces of `size` and folds the deltas. */
function stream(parser: ToolParserName, text: string, size: number, parallel = true, toolNames: readonly string[] = []) {
  const s = new ToolCallStream(parser, { parallelToolCalls: parallel, toolNames });
  const deltas: { content: string; toolCalls: DeltaToolCall[] }[] = [];
  for (let i = 0; i < text.length; i += size) deltas.push(s.push(text.slice(i, i + size)));
  deltas.push(s.finish());
  const content = deltas.map((d) => d.content).join('');
  const calls: { id?: string; name?: string; args: string }[] = [];
  for (const d of deltas.flatMap((x) => x.toolCalls)) {
    if (d.id) {
      expect(d).toEqual({ index: d.index, id: d.id, type: 'function', function: { name: d.function.name, arguments: '' } });
      calls[d.index] = { id: d.id, name: d.function.name, args: '' };
    } else {
      expect(calls[d.index]).toBeDefined(); // header first
      calls[d.index]!.args += d.function.arguments ?? '';
    }
  }
  return { content, calls, called: s.called };
}

const CASES: [ToolParserName, string, string | null, [string, unknown][]][] = [
  ['hermes', 'Let me check.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>', 'Let me check.\n', [['get_weather', { city: 'Paris' }]]],
  ['hermes', '<tool_call>\n{"name": "a", "arguments": {"x": "}}"}}\n</tool_call>\n<tool_call>\n{"name": "b", "arguments": {}}\n</tool_call>', null, [['a', { x: '}}' }], ['b', {}]]],
  ['llama3_json', '{"name": "get_weather", "parameters": {"city": "Paris", "n": [1, 2]}}', null, [['get_weather', { city: 'Paris', n: [1, 2] }]]],
  ['llama3_json', '<|python_tag|>{"name": "a", "parameters": {"q": 1}}; {"name": "b", "parameters": {"r": "s"}}', null, [['a', { q: 1 }], ['b', { r: 's' }]]],
  ['mistral', '[TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "b", "arguments": {"k": true}}]', null, [['get_weather', { city: 'Paris' }], ['b', { k: true }]]],
  ['mistral', 'Sure.[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}[TOOL_CALLS]b[ARGS]{"k": [1]}', 'Sure.', [['get_weather', { city: 'Paris' }], ['b', { k: [1] }]]],
];

describe('chat tool parser', () => {
  it('ids are call_ + 24 alphanumerics', () => {
    expect(makeToolCallId()).toMatch(/^call_[A-Za-z0-9]{24}$/);
    expect(makeToolCallId()).not.toBe(makeToolCallId());
  });

  it.each(CASES)('%s non-stream: %s', (parser, text, content, expected) => {
    const r = extractToolCalls(text, parser);
    expect(r.content).toBe(content);
    expect(r.toolCalls.map((c) => [c.function.name, JSON.parse(c.function.arguments)])).toEqual(expected);
    for (const c of r.toolCalls) expect(c).toMatchObject({ type: 'function', id: expect.stringMatching(/^call_[A-Za-z0-9]{24}$/) });
  });

  it.each(CASES)('%s stream agrees with non-stream at every chunk size: %s', (parser, text, content, expected) => {
    for (const size of [1, 2, 3, 7, 1000]) {
      const r = stream(parser, text, size);
      expect(r.called).toBe(true);
      expect(r.content.trim() === '' ? null : r.content).toBe(content);
      expect(r.calls.map((c) => [c.name, JSON.parse(c.args)])).toEqual(expected);
      // No markup leaks as content.
      for (const m of ['<tool_call>', '</tool_call>', '[TOOL_CALLS]', '<|python_tag|>', '[ARGS]', '"name"']) expect(r.content).not.toContain(m);
    }
  });

  it('plain text stays content; llama JSON only at the start; JSON answers are not calls', () => {
    for (const p of ['hermes', 'llama3_json', 'mistral'] as const) {
      expect(extractToolCalls('Just text < with [brackets] {and braces}', p)).toEqual({ content: 'Just text < with [brackets] {and braces}', toolCalls: [] });
      expect(stream(p, 'Just text <tool', 2).content).toBe('Just text <tool');
    }
    expect(extractToolCalls('Answer: {"name": "x", "parameters": {}}', 'llama3_json').toolCalls).toEqual([]);
    expect(extractToolCalls('{"answer": 42}', 'llama3_json')).toEqual({ content: '{"answer": 42}', toolCalls: [] });
    expect(stream('llama3_json', '{"answer": 42}', 1).content).toBe('{"answer": 42}');
  });

  it('malformed calls leave the whole text as content (non-stream)', () => {
    const text = '<tool_call>\n{"name": "f", "arguments": {"x": }\n</tool_call>';
    expect(extractToolCalls(text, 'hermes')).toEqual({ content: text, toolCalls: [] });
    expect(extractToolCalls('<tool_call>{"no_name": 1}</tool_call>', 'hermes').toolCalls).toEqual([]);
  });

  it('an unfinished call (length cut) streams what it has', () => {
    const r = stream('hermes', '<tool_call>\n{"name": "f", "arguments": {"city": "Par', 4);
    expect(r.calls[0]!.name).toBe('f');
    expect(r.calls[0]!.args).toBe('{"city": "Par');
  });

  it('tool_choice none parses nothing; parallel_tool_calls false keeps the first call', () => {
    const text = CASES[1]![1];
    expect(extractToolCalls(text, 'hermes', { toolChoice: 'none' })).toEqual({ content: text, toolCalls: [] });
    expect(extractToolCalls(text, 'hermes', { parallelToolCalls: false }).toolCalls.map((c) => c.function.name)).toEqual(['a']);
    expect(stream('hermes', text, 5, false).calls.map((c) => c.name)).toEqual(['a']);
    const none = new ToolCallStream('hermes', { toolChoice: 'none' });
    expect(none.push(text)).toEqual({ content: text, toolCalls: [] });
    expect(none.called).toBe(false);
  });

  it('a call without arguments gets "{}"', () => {
    expect(extractToolCalls('<tool_call>{"name": "now"}</tool_call>', 'hermes').toolCalls[0]!.function.arguments).toBe('{}');
  });

  it('argument fragments never include the wrapper close', () => {
    const p = new ToolCallStreamParser('hermes');
    const d1 = p.push('<tool_call>{"name": "f", "arguments": {"a": {"b": 1}');
    // `{"a": {"b": 1}` is incomplete; its trailing `}` could still be the wrapper's, so it is held.
    expect(d1.toolCalls.map((t) => t.function.arguments).join('')).toBe('{"a": {"b": 1');
    const d15 = p.push('}');
    expect(d15.toolCalls.map((t) => t.function.arguments).join('')).toBe('}}');
    const d2 = p.push('}</tool_call>'); // the wrapper's close: no argument text, no content
    expect(d2.toolCalls).toEqual([]);
    expect(d2.content).toBe('');
  });

  it('detects the parser from the template', () => {
    expect(detectToolParser(null)).toBeNull();
    expect(detectToolParser('{{ messages }}')).toBeNull();
    expect(detectToolParser(readTemplate('Qwen-Qwen2.5-7B-Instruct.jinja'))).toBe('hermes');
    expect(detectToolParser(readTemplate('Qwen-Qwen3-0.6B.jinja'))).toBe('hermes');
    expect(detectToolParser(readTemplate('NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja'))).toBe('hermes');
    expect(detectToolParser(readTemplate('meta-llama-Llama-3.1-8B-Instruct.jinja'))).toBe('llama3_json');
    expect(detectToolParser(readTemplate('meta-llama-Llama-3.2-3B-Instruct.jinja'))).toBe('llama3_json');
    expect(detectToolParser(readTemplate('Mistral-Small-3.2-24B-Instruct-2506.jinja'))).toBe('mistral');
    expect(detectToolParser(readTemplate('mistralai-Mistral-Nemo-Instruct-2407.jinja'))).toBe('mistral');
  });

  describe('hermes untagged form (tools offered)', () => {
    const offered = ['get_weather', 'search'];
    const ACCEPTED: [string, [string, unknown][]][] = [
      ['{"name": "get_weather", "arguments": {"city": "Paris"}}', [['get_weather', { city: 'Paris' }]]],
      ['\n  {"arguments": {"q": "x}"}, "name": "search"}\n', [['search', { q: 'x}' }]]],
      ['[{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "search", "arguments": {}}]', [['get_weather', { city: 'Paris' }], ['search', {}]]],
      // Qwen2.5-Coder-0.5B's own words for "How many people live in Lyon?" with a search tool offered.
      ['```json\n{\n  "name": "search",\n  "arguments": {\n    "q": "Lyon"\n  }\n}\n```', [['search', { q: 'Lyon' }]]],
      ['```\n[{"name": "search", "arguments": {}}]\n```\n', [['search', {}]]],
    ];
    it.each(ACCEPTED)('accepted, stream and non-stream alike: %s', (text, expected) => {
      const r = extractToolCalls(text, 'hermes', { toolNames: offered });
      expect(r.content).toBeNull();
      expect(r.toolCalls.map((c) => [c.function.name, JSON.parse(c.function.arguments)])).toEqual(expected);
      for (const size of [1, 3, 1000]) {
        const s = stream('hermes', text, size, true, offered);
        expect(s.called).toBe(true);
        expect(s.content.trim()).toBe('');
        expect(s.calls.map((c) => [c.name, JSON.parse(c.args)])).toEqual(expected);
      }
    });

    const REJECTED: [string, string][] = [
      ['a name that was not offered', '{"name": "delete_all", "arguments": {}}'],
      ['arguments that are not an object', '{"name": "search", "arguments": "x"}'],
      ['arguments missing', '{"name": "search"}'],
      ['"parameters" instead of "arguments"', '{"name": "search", "parameters": {}}'],
      ['an extra key', '{"name": "search", "arguments": {}, "id": 1}'],
      ['text before the object', 'Sure: {"name": "search", "arguments": {}}'],
      ['text after the object', '{"name": "search", "arguments": {}} done'],
      ['two objects side by side', '{"name": "search", "arguments": {}}{"name": "search", "arguments": {}}'],
      ['an array with a non-call', '[{"name": "search", "arguments": {}}, 3]'],
      ['an empty array', '[]'],
      ['invalid JSON', '{"name": "search", "arguments": {]}'],
      ['an unfinished object (length cut)', '{"name": "search", "arguments": {"q": "x'],
      ['an ordinary JSON answer', '{"city": "Paris", "country": "France"}'],
      ['a fence never closed', '```json\n{"name": "search", "arguments": {}}\n'],
      ['text after the fence', '```json\n{"name": "search", "arguments": {}}\n```\nThat is the call.'],
      ['a fence of another language', '```python\n{"name": "search", "arguments": {}}\n```'],
    ];
    it.each(REJECTED)('rejected (%s): the text stays content, stream and non-stream', (_why, text) => {
      expect(extractToolCalls(text, 'hermes', { toolNames: offered })).toEqual({ content: text, toolCalls: [] });
      for (const size of [1, 4, 1000]) {
        const s = stream('hermes', text, size, true, offered);
        expect(s.called).toBe(false);
        expect(s.content).toBe(text);
      }
    });

    it('only with tools offered, only for hermes, never with tool_choice none', () => {
      const text = ACCEPTED[0]![0];
      expect(extractToolCalls(text, 'hermes')).toEqual({ content: text, toolCalls: [] });
      expect(extractToolCalls(text, 'hermes', { toolNames: offered, toolChoice: 'none' })).toEqual({ content: text, toolCalls: [] });
      expect(extractToolCalls(text, 'mistral', { toolNames: offered })).toEqual({ content: text, toolCalls: [] });
    });

    it('tagged calls still parse with tools offered, also after held JSON-like text', () => {
      const tagged = CASES[0]![1];
      expect(extractToolCalls(tagged, 'hermes', { toolNames: offered }).toolCalls.map((c) => c.function.name)).toEqual(['get_weather']);
      const mixed = '{"a": 1}\n<tool_call>{"name": "search", "arguments": {"q": "y"}}</tool_call>';
      const r = extractToolCalls(mixed, 'hermes', { toolNames: offered });
      expect(r.content).toBe('{"a": 1}\n');
      expect(r.toolCalls.map((c) => c.function.name)).toEqual(['search']);
      expect(stream('hermes', mixed, 2, true, offered).content).toBe('{"a": 1}\n');
    });

    it('plain text is not held back: it streams as it comes', () => {
      const s = new ToolCallStream('hermes', { toolNames: offered });
      expect(s.push('Hello').content).toBe('Hello');
      const held = new ToolCallStream('hermes', { toolNames: offered });
      expect(held.push('{"name": "search", "arguments": {}}').content).toBe('');
      expect(held.finish().toolCalls.map((t) => t.function.name ?? t.function.arguments)).toEqual(['search', '{}']);
    });
  });
});
