// End to end: `tokenmill serve` with no --model answers chat with the built-in demo model (made by
// build:ts), and several --model flags serve several models, each with its own engine.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { stories260K } from '../helpers/shared.js';
import { repoRoot, startServer, type RunningServer } from './server-helpers.js';

const running: RunningServer[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const s of running.splice(0)) await s.stop('SIGKILL');
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
const tmp = (): string => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'tm-e2e-demo-'));
  dirs.push(d);
  return d;
};

describe('e2e: demo model and several models', () => {
  it('serves the demo model without --model (open mode warns and binds 127.0.0.1)', async () => {
    const server = await startServer(['--data-dir', tmp()], { TOKENMILL_API_KEY: '' });
    running.push(server);
    expect(server.base).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(server.stderr()).toMatch(/no API key configured/);
    const client = new OpenAI({ apiKey: 'unused', baseURL: `${server.base}/v1`, maxRetries: 0 });
    expect((await client.models.list()).data.map((m) => m.id)).toEqual(['demo']);
    const r = await client.chat.completions.create({ model: 'demo', messages: [{ role: 'user', content: 'Hello' }], max_tokens: 8 });
    expect(r.choices[0]!.message.role).toBe('assistant');
    expect(typeof r.choices[0]!.message.content).toBe('string');
    expect(r.usage!.completion_tokens).toBeGreaterThan(0);
    expect(await server.stop('SIGTERM')).toBe(0);
  });

  it('serves two models at once, routed by `model`', async () => {
    const demo = path.join(repoRoot, 'models', 'demo.gguf');
    const server = await startServer(['--data-dir', tmp(), '--model', stories260K, '--model', demo, '--served-model-name', 'stories', '--served-model-name', 'demo']);
    running.push(server);
    const client = new OpenAI({ apiKey: 'unused', baseURL: `${server.base}/v1`, maxRetries: 0 });
    expect((await client.models.list()).data.map((m) => m.id)).toEqual(['stories', 'demo']);
    const a = await client.chat.completions.create({ model: 'demo', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 2 });
    expect(a.model).toBe('demo');
    const b = await client.chat.completions.create({ model: 'stories', messages: [{ role: 'user', content: 'Once upon a time' }], max_tokens: 2, chat_template: "{{ messages[0]['content'] }}" } as never) as unknown as OpenAI.ChatCompletion;
    expect(b.model).toBe('stories');
    // Each answer was sent after its request's last record, which the engine hands over only once the
    // stats no longer count the request: both models read idle at once.
    const metrics = await (await fetch(`${server.base}/metrics`)).text();
    expect(metrics).toContain('vllm:num_requests_running{model_name="stories"} 0');
    expect(metrics).toContain('vllm:num_requests_running{model_name="demo"} 0');
  });
});
