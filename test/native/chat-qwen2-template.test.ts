// engine.chat on a synthetic qwen2 model carrying the real qwen2 vocabulary and the Qwen2.5 chat
// template: the rendered prompt's special markers become single tokens (parseSpecial), the template
// comes from the GGUF, and tools are rendered into the prompt (with tool_choice "none" too).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildSynthModel } from '../../bench/synth-model.js';
import { Engine, Model } from '../../lib/index.js';
import type { ChatCompletionChunk } from '../../lib/openai/protocol.js';
import { GGUFWriter, gv } from '../helpers/gguf-writer.js';
import { templatesDir, vocabDir } from '../helpers/shared.js';

const IM_START = 151644;
const IM_END = 151645;

let dir: string;
let model: Model;
let engine: Engine;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tm-chat-qwen2-'));
  const file = path.join(dir, 'qwen2-chat.gguf');
  // The synthetic model's writer, with the Qwen2.5 template added to its metadata.
  const built = buildSynthModel({
    arch: 'qwen2', type: 'F32', nEmbd: 32, nLayer: 1, nHead: 2, nHeadKv: 1, nFf: 64, nCtx: 512,
    vocab: path.join(vocabDir, 'ggml-vocab-qwen2.gguf'), tiedOutput: true, seed: 7,
  });
  const w: GGUFWriter = built.writer;
  w.set('tokenizer.chat_template', gv.string(readFileSync(path.join(templatesDir, 'Qwen-Qwen2.5-7B-Instruct.jinja'), 'utf8')));
  await w.writeFile(file);
  model = await Model.load(file);
  engine = await Engine.create(model, { threads: 1 });
});

afterAll(async () => {
  await engine?.close();
  model?.dispose();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('chat on a qwen2 model with the Qwen2.5 template', () => {
  test('<|im_start|> and <|im_end|> are single tokens of the prompt; served name from the file', async () => {
    const r = await engine.chat({
      model: 'qwen2-chat',
      messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hello there' }],
      max_completion_tokens: 3,
      return_token_ids: true,
      ignore_eos: true,
    });
    expect(r.model).toBe('qwen2-chat');
    const ids = r.prompt_token_ids!;
    expect(ids[0]).toBe(IM_START);
    expect(ids.filter((t) => t === IM_START)).toHaveLength(3); // system, user, generation prompt
    expect(ids.filter((t) => t === IM_END)).toHaveLength(2);
    // The prompt text round-trips: it is exactly the template's rendering.
    expect(model.detokenize(ids)).toBe('<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHello there<|im_end|>\n<|im_start|>assistant\n');
    expect(r.usage.prompt_tokens).toBe(ids.length);
    expect(r.choices[0]!.token_ids).toHaveLength(3);
    expect(r.choices[0]!.finish_reason).toBe('length');
  });

  test('tools are rendered into the prompt (also with tool_choice none)', async () => {
    const tools = [{ type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: {} } } }];
    for (const extra of [{}, { tool_choice: 'none' }]) {
      const r = await engine.chat({
        messages: [{ role: 'user', content: 'Weather?' }], tools, max_completion_tokens: 1, return_token_ids: true, ...extra,
      });
      expect(model.detokenize(r.prompt_token_ids!)).toContain('"name": "get_weather"');
    }
  });
});

// A real engine produces a hermes tool call: the random-weight model is steered by a grammar (the output
// is the grammar's only sentence), and the chat layer must find the call in the detokenised text, with
// and without streaming, like it would in a Qwen model's output.
describe('tool calls parsed from a real engine\'s output (grammar-forced)', () => {
  const tools = [
    { type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } },
    { type: 'function', function: { name: 'get_time', description: 'Time', parameters: { type: 'object', properties: {} } } },
  ];
  const call1 = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>';
  const call2 = '<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>';
  const gbnf = (text: string) => `root ::= ${JSON.stringify(text)}`;
  const request = (output: string, extra: Record<string, unknown> = {}) => ({
    messages: [{ role: 'user', content: 'Weather in Paris?' }], tools, temperature: 0, max_completion_tokens: 100,
    structured_outputs: { grammar: gbnf(output) }, ...extra,
  });

  test('non-streaming: message.tool_calls, the text before the call as content, finish_reason tool_calls; parallel_tool_calls false keeps the first', async () => {
    const r = await engine.chat(request(`Let me check.${call1}`));
    const choice = r.choices[0]!;
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.content).toBe('Let me check.');
    expect(choice.message.tool_calls).toHaveLength(1);
    const tc = choice.message.tool_calls![0]!;
    expect(tc.id).toMatch(/^call_[A-Za-z0-9]{24}$/);
    expect(tc.function.name).toBe('get_weather');
    expect(JSON.parse(tc.function.arguments)).toEqual({ city: 'Paris' });

    const two = await engine.chat(request(`${call1}\n${call2}`));
    expect(two.choices[0]!.message.tool_calls!.map((c) => c.function.name)).toEqual(['get_weather', 'get_time']);
    const first = await engine.chat(request(`${call1}\n${call2}`, { parallel_tool_calls: false }));
    expect(first.choices[0]!.message.tool_calls!.map((c) => c.function.name)).toEqual(['get_weather']);

    const none = await engine.chat(request(call1, { tool_choice: 'none' }));
    expect(none.choices[0]!.message.tool_calls ?? []).toEqual([]);
    expect(none.choices[0]!.message.content).toBe(call1);
    expect(none.choices[0]!.finish_reason).toBe('stop');
  });

  test('streaming: tool-call deltas (index, id, name, then argument fragments) that reassemble the call', async () => {
    const chunks: ChatCompletionChunk[] = [];
    for await (const item of engine.chatStream(request(call1, { stream: true }))) {
      expect(item).not.toHaveProperty('error');
      chunks.push(item as ChatCompletionChunk);
    }
    const deltas = chunks.flatMap((c) => c.choices.flatMap((ch) => ch.delta.tool_calls ?? []));
    expect(deltas.length).toBeGreaterThan(0);
    expect(deltas[0]).toMatchObject({ index: 0, type: 'function', function: { name: 'get_weather' } });
    expect(deltas[0]!.id).toMatch(/^call_/);
    expect(JSON.parse(deltas.map((d) => d.function?.arguments ?? '').join(''))).toEqual({ city: 'Paris' });
    const content = chunks.flatMap((c) => c.choices.map((ch) => ch.delta.content ?? '')).join('');
    expect(content).not.toContain('<tool_call>');
    const finish = chunks.flatMap((c) => c.choices.map((ch) => ch.finish_reason)).filter((f) => f != null);
    expect(finish).toEqual(['tool_calls']);
  });
});
