// End to end: the real server (bin/tokenmill.cjs serve, built dist/) on stories260K with the official
// openai client. Needs `npm run build:ts` and the addon.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { oraclesDir, stories260K } from '../helpers/shared.js';
import { cli, startServer, type RunningServer } from './server-helpers.js';

// Response.json() is typed unknown; these tests inspect the bodies freely.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const jsonOf = (r: Response): Promise<any> => r.json();

const oracle = JSON.parse(fs.readFileSync(path.join(oraclesDir, 'stories260K.once-upon-a-time.n64.json'), 'utf8')) as { text: string; promptTokens: number[] };
const KEY = 'sk-e2e-test';
const RAW_TEMPLATE = "{{ messages[0]['content'] }}";
// Request-supplied template that renders the bare prompt, BOS added by add_special_tokens: llama.cpp's prompt.
const storyParams = { chat_template: RAW_TEMPLATE, add_special_tokens: true, temperature: 0 } as Record<string, unknown>;
const messages = [{ role: 'user' as const, content: 'Once upon a time' }];

let dataDir: string;
let server: RunningServer;
let client: OpenAI;
const post = (p: string, body: string, headers: Record<string, string> = {}) =>
  fetch(`${server.base}${p}`, { method: 'POST', headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json', ...headers }, body });
const startStories = () => startServer(['--model', stories260K, '--served-model-name', 'stories', '--data-dir', dataDir, '--api-key', KEY, '--max-request-bytes', '65536']);

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tm-e2e-'));
  server = await startStories();
  client = new OpenAI({ apiKey: KEY, baseURL: `${server.base}/v1`, maxRetries: 0 });
});
afterAll(async () => {
  await server?.stop('SIGKILL');
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('e2e: chat with the openai client', () => {
  it('lists the served model', async () => {
    const list = await client.models.list();
    expect(list.data.map((m) => m.id)).toEqual(['stories']);
    expect(list.data[0]).toMatchObject({ object: 'model', owned_by: 'tokenmill', max_model_len: expect.any(Number) });
  });

  it('non-stream greedy output equals llama.cpp\'s oracle; usage counts the oracle prompt', async () => {
    const r = await client.chat.completions.create({ model: 'stories', messages, max_tokens: 64, ...storyParams } as never) as unknown as OpenAI.ChatCompletion;
    expect(r.choices[0]!.message.content).toBe(oracle.text);
    expect(r.choices[0]!.finish_reason).toBe('length');
    expect(r.usage).toMatchObject({ prompt_tokens: oracle.promptTokens.length, completion_tokens: 64 });
  });

  it('stream output equals the oracle, with the usage chunk when include_usage', async () => {
    const stream = await client.chat.completions.create({ model: 'stories', messages, max_tokens: 64, stream: true, stream_options: { include_usage: true }, ...storyParams } as never) as unknown as AsyncIterable<OpenAI.ChatCompletionChunk>;
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      for (const c of chunk.choices) text += c.delta.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe(oracle.text);
    expect(usage).toMatchObject({ prompt_tokens: 5, completion_tokens: 64 });
  });

  it('logprobs, n=2 and stop', async () => {
    const lp = await client.chat.completions.create({ model: 'stories', messages, max_tokens: 4, logprobs: true, top_logprobs: 2, ...storyParams } as never) as unknown as OpenAI.ChatCompletion;
    const content = lp.choices[0]!.logprobs!.content!;
    expect(content).toHaveLength(4);
    expect(content[0]!.token).toBe(',');
    expect(content[0]!.top_logprobs).toHaveLength(2);
    const two = await client.chat.completions.create({ model: 'stories', messages, max_tokens: 8, n: 2, ...storyParams, temperature: 1, seed: 7 } as never) as unknown as OpenAI.ChatCompletion;
    expect(two.choices.map((c) => c.index)).toEqual([0, 1]);
    const stop = await client.chat.completions.create({ model: 'stories', messages, max_tokens: 64, stop: [' Lily'], ...storyParams } as never) as unknown as OpenAI.ChatCompletion;
    expect(stop.choices[0]!.message.content).toBe(oracle.text.slice(0, oracle.text.indexOf(' Lily')));
    expect(stop.choices[0]!.finish_reason).toBe('stop');
  });
});

describe('e2e: structured outputs and beam search through the openai client', () => {
  it('response_format json_schema gives JSON of that schema; a bad grammar is a 400 naming its position', async () => {
    const schema = { type: 'object', properties: { name: { type: 'string', maxLength: 12 }, age: { type: 'integer', minimum: 0, maximum: 120 } }, required: ['name', 'age'] };
    const r = await client.chat.completions.create({
      model: 'stories', messages, max_tokens: 120, seed: 5, ...storyParams, temperature: 1,
      response_format: { type: 'json_schema', json_schema: { name: 'person', schema } },
    } as never) as unknown as OpenAI.ChatCompletion;
    expect(r.choices[0]!.finish_reason).toBe('stop');
    const value = JSON.parse(r.choices[0]!.message.content!) as { name: string; age: number };
    expect(Object.keys(value).sort()).toEqual(['age', 'name']);
    expect(typeof value.name).toBe('string');
    expect(Number.isInteger(value.age) && value.age >= 0 && value.age <= 120).toBe(true);

    const err = await client.chat.completions.create({ model: 'stories', messages, ...storyParams, structured_outputs: { grammar: 'root ::= "a" missing' } } as never).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).message).toMatch(/undefined rule 'missing' at line 1, column \d+/);
  });

  it('use_beam_search returns n choices ranked best first', async () => {
    const r = await client.chat.completions.create({ model: 'stories', messages, max_tokens: 6, n: 3, use_beam_search: true, ...storyParams } as never) as unknown as OpenAI.ChatCompletion;
    expect(r.choices.map((c) => c.index)).toEqual([0, 1, 2]);
    expect(new Set(r.choices.map((c) => c.message.content)).size).toBe(3);
    expect(r.usage!.completion_tokens).toBeGreaterThan(0);
  });
});

describe('e2e: errors (docs/http-api.md#errors)', () => {
  it('401, 404, 400 priority, 400 no template through the client', async () => {
    const bad = new OpenAI({ apiKey: 'wrong', baseURL: `${server.base}/v1`, maxRetries: 0 });
    await expect(bad.models.list()).rejects.toMatchObject({ status: 401 });
    await expect(client.chat.completions.create({ model: 'nope', messages } as never)).rejects.toMatchObject({ status: 404, error: { param: 'model' } });
    await expect(client.chat.completions.create({ model: 'stories', messages, priority: 1, ...storyParams } as never)).rejects.toMatchObject({ status: 400, error: { message: 'Got priority 1 but Priority scheduling is not enabled.' } });
    await expect(client.chat.completions.create({ model: 'stories', messages } as never)).rejects.toMatchObject({ status: 400, error: { message: expect.stringContaining('no chat template') } });
  });

  it('413, 415 envelopes and 422 detail; validation wins over priority (400 priority order)', async () => {
    const big = await post('/v1/chat/completions', JSON.stringify({ messages, pad: 'x'.repeat(70_000) }));
    expect(big.status).toBe(413);
    expect((await jsonOf(big)).error.code).toBe(413);
    const ct = await post('/v1/chat/completions', '{}', { 'content-type': 'text/plain' });
    expect(ct.status).toBe(415);
    const v = await post('/v1/chat/completions', JSON.stringify({ model: 'stories', messages: [{ content: 1 }], priority: 5 }));
    expect(v.status).toBe(422);
    const detail = (await jsonOf(v)).detail as { loc: unknown[]; type: string }[];
    expect(detail.some((d) => JSON.stringify(d.loc) === JSON.stringify(['body', 'messages', 0, 'role']) && d.type === 'missing')).toBe(true);
  });
});

describe('e2e: usage, abort, trajectory log, restart', () => {
  it('a client abort mid-stream frees the request (metrics show 0 running)', async () => {
    const ac = new AbortController();
    const stream = await client.chat.completions.create({ model: 'stories', messages, max_tokens: 2000, ignore_eos: true, stream: true, ...storyParams } as never, { signal: ac.signal }) as unknown as AsyncIterable<OpenAI.ChatCompletionChunk>;
    let chunks = 0;
    try {
      for await (const _ of stream) {
        if (++chunks === 3) {
          ac.abort();
          break;
        }
      }
    } catch {
      // the client may surface the abort as an error or just end the iteration
    }
    expect(chunks).toBe(3);
    let running = -1;
    let text = '';
    for (let i = 0; i < 100; i++) {
      text = await (await fetch(`${server.base}/metrics`)).text();
      running = Number(/vllm:num_requests_running\{model_name="stories"\} (\d+)/.exec(text)?.[1]);
      if (running === 0 && /finished_reason="abort"\} [1-9]/.test(text)) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(running).toBe(0);
    expect(text).toMatch(/vllm:request_success_total\{model_name="stories",finished_reason="abort"\} 1\n/);
  });

  it('logs trajectories (200 with metrics, 422, 404); they survive kill -9; usage is attributed by OpenAI-Project', async () => {
    const body = { model_id: 'stories', split: 'val', trajectory_groups: [{ trajectories: [{ reward: 1, messages_and_choices: [{ role: 'user', content: 'q' }, { index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'a' }, logprobs: null }] }, { reward: 0 }] }] };
    const ok = await post('/v1/preview/models/stories/log', JSON.stringify(body));
    expect(ok.status).toBe(200);
    expect(await jsonOf(ok)).toMatchObject({ object: 'trajectory_log', groups: 1, trajectories: 2, metrics: { 'val/reward': 0.5, 'val/reward_std_dev': 0.5, 'val/exception_rate': 0 } });
    expect((await post('/v1/preview/models/stories/log', JSON.stringify({ split: 'val' }))).status).toBe(422);
    expect((await post('/v1/preview/models/other/log', JSON.stringify(body))).status).toBe(404);
    await server.stop('SIGKILL');

    server = await startStories();
    client = new OpenAI({ apiKey: KEY, baseURL: `${server.base}/v1`, maxRetries: 0, defaultHeaders: { 'OpenAI-Project': 'acme/web' } });
    const exported = cli(['trajectories', 'export', '--model', 'stories', '--data-dir', dataDir]).trim().split('\n').map((l) => JSON.parse(l));
    expect(exported).toHaveLength(1);
    expect(exported[0]).toMatchObject({ split: 'val', trajectories: [{ reward: 1 }, { reward: 0, logs: [] }] });
    await client.chat.completions.create({ model: 'stories', messages, max_tokens: 3, ...storyParams } as never);
    const badProject = await post('/v1/chat/completions', JSON.stringify({ model: 'stories', messages, max_tokens: 1, ...storyParams }), { 'openai-project': 'noslash' });
    expect(badProject.status).toBe(400);
    expect(await server.stop('SIGTERM')).toBe(0);
    const rows = JSON.parse(cli(['usage', '--json', '--data-dir', dataDir])) as { team: string; project: string; model: string; requests: number; prompt_tokens: number; completion_tokens: number }[];
    expect(rows.find((r) => r.team === 'acme' && r.project === 'web')).toMatchObject({ model: 'stories', requests: 1, prompt_tokens: 5, completion_tokens: 3 });
    // Requests before the kill -9 may be lost from usage (batched, at most one flush interval); the
    // graceful SIGTERM above flushed everything since the restart.
    server = await startStories();
  });
});
