// The HTTP server over a real engine on stories260K with grammars that compile off the JS thread: a
// streamed request whose grammar does not compile is still a plain 400 JSON error (no SSE bytes), the
// non-stream one too, and a good grammar streams output of its language.
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine, Model } from '../../lib/index.js';
import { createServer, type TokenmillServer } from '../../lib/server/server.js';
import { stories260K } from '../helpers/shared.js';

let model: Model;
let engine: Engine;
let server: TokenmillServer;
let base: string;
let dataDir: string;

beforeAll(async () => {
  model = await Model.load(stories260K);
  engine = await Engine.create(model, { threads: 1, kvCacheMemory: 4 << 20, servedModelName: 'stories' });
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tm-grammar-server-'));
  server = createServer({ models: [{ id: 'stories', engine }], dataDir, log: () => undefined });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  await server.ready;
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await server?.drain(1000);
  await engine?.close();
  model?.dispose();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

const chat = (extra: Record<string, unknown>) => fetch(`${base}/v1/chat/completions`, {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({
    model: 'stories',
    messages: [{ role: 'user', content: 'Once upon a time' }],
    chat_template: '{{ messages[0].content }}',
    temperature: 0,
    max_completion_tokens: 16,
    ...extra,
  }),
});

describe('server: grammars compiled on the worker', () => {
  it('a bad grammar is a 400 JSON error before any SSE bytes, stream or not', async () => {
    for (const stream of [true, false]) {
      const r = await chat({ stream, structured_outputs: { grammar: 'root ::= "a" missing' } });
      expect(r.status, `stream ${stream}`).toBe(400);
      expect(r.headers.get('content-type')).toMatch(/^application\/json/);
      const body = (await r.json()) as { error: { message: string; type: string; code: number } };
      expect(body.error).toMatchObject({ type: 'BadRequestError', code: 400, message: "grammar: undefined rule 'missing' at line 1, column 14" });
    }
  });

  it('a good grammar streams text of its language', async () => {
    const r = await chat({ stream: true, structured_outputs: { choice: ['yes', 'no'] } });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = (await r.text()).split('\n\n').filter((e) => e.startsWith('data: ')).map((e) => e.slice(6));
    expect(events[events.length - 1]).toBe('[DONE]');
    const text = events.slice(0, -1).map((e) => JSON.parse(e) as { choices: { delta: { content?: string } }[] })
      .flatMap((c) => c.choices.map((ch) => ch.delta.content ?? '')).join('');
    expect(['yes', 'no']).toContain(text);
  });
});
