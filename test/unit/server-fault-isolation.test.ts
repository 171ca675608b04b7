// An unexpected exception in one request — thrown synchronously, rejected, thrown by stats(), by the
// stream's first step or in the middle of a stream, a usage hook that throws — is that request's 500
// (or its in-stream error event), while a stream of another model keeps going to its end and the
// server keeps answering.
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ChatInput } from '../../lib/openai/chat-input.js';
import { createServer, type TokenmillServer } from '../../lib/server/server.js';
import type { ChatCallOptions, ChatEngineLike } from '../../lib/server/types.js';

const chunk = (content: string, finish: string | null = null) =>
  ({ id: 'chatcmpl-x', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content }, logprobs: null, finish_reason: finish }] }) as never;

const stats = () => ({ running: 0, waiting: 0, kvCacheUsage: 0, kvBlocksTotal: 8, kvBlocksFree: 8, prefixCacheQueries: 0, prefixCacheHits: 0, preemptions: 0, promptTokens: 0, generationTokens: 0 });

/** Fails in the way the request's `fault` field names. */
class FaultyEngine implements ChatEngineLike {
  readonly maxModelLen = 64;
  readonly model = { info: { path: '/models/faulty.gguf' } };
  statsFault = false;
  stats() {
    if (this.statsFault) throw new TypeError('stats exploded');
    return stats();
  }
  chat(input: ChatInput): Promise<never> {
    const fault = (input.request as { fault?: string }).fault;
    if (fault === 'sync') throw new TypeError("Cannot read properties of undefined (reading 'x')");
    if (fault === 'range') throw new RangeError('Invalid array length');
    return Promise.reject(new Error('rejected deep inside'));
  }
  chatStream(input: ChatInput): AsyncIterable<never> {
    const fault = (input.request as { fault?: string }).fault;
    if (fault === 'not-iterable') return {} as AsyncIterable<never>;
    return (async function* () {
      if (fault === 'first') throw new TypeError('first step failed');
      yield chunk('a');
      throw new Error('mid-stream failure');
    })();
  }
}

/** Streams `count` chunks 10 ms apart. */
class SteadyEngine implements ChatEngineLike {
  readonly maxModelLen = 64;
  readonly model = { info: { path: '/models/steady.gguf' } };
  stats() {
    return stats();
  }
  async chat(): Promise<never> {
    throw new Error('not used');
  }
  async *chatStream(input: ChatInput, o?: ChatCallOptions) {
    const count = (input.request as { count?: number }).count ?? 50;
    for (let i = 0; i < count && !o?.signal?.aborted; i++) {
      yield chunk(`${i} `, i === count - 1 ? 'stop' : null);
      await new Promise((r) => setTimeout(r, 10));
    }
  }
}

const servers: TokenmillServer[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.drain(1000);
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

async function start() {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tm-faults-'));
  dirs.push(dataDir);
  const faulty = new FaultyEngine();
  const logged: string[] = [];
  const server = createServer({
    models: [{ id: 'faulty', engine: faulty }, { id: 'steady', engine: new SteadyEngine() }],
    dataDir,
    log: (_level, message) => logged.push(message),
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  await server.ready;
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, faulty, logged };
}

const post = (base: string, body: unknown) =>
  fetch(`${base}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
const messages = [{ role: 'user', content: 'hi' }];

describe('server: one request\'s exception stays in that request', () => {
  it('sync, rejected, stats(), first-step, mid-stream and non-iterable faults: each its own 500 / error event; a parallel stream completes', async () => {
    const { base, faulty, logged } = await start();
    const steady = post(base, { model: 'steady', messages, stream: true, count: 40 }).then((r) => r.text());

    for (const fault of ['sync', 'range', 'reject']) {
      const r = await post(base, { model: 'faulty', messages, fault });
      expect(r.status).toBe(500);
      const body = await r.text();
      expect(JSON.parse(body).error.type).toBe('InternalServerError');
      expect(body).not.toMatch(/at \w|exploded|deep inside|array length/);
    }
    for (const fault of ['first', 'not-iterable']) {
      const r = await post(base, { model: 'faulty', messages, stream: true, fault });
      expect(r.status, fault).toBe(500);
    }
    const mid = await post(base, { model: 'faulty', messages, stream: true, fault: 'mid' });
    expect(mid.status).toBe(200);
    const events = (await mid.text()).split('\n\n').filter(Boolean);
    expect(events.at(-2)).toContain('"error"');
    expect(events.at(-1)).toBe('data: [DONE]');
    faulty.statsFault = true;
    expect((await post(base, { model: 'faulty', messages })).status).toBe(500);
    faulty.statsFault = false;

    const text = await steady;
    expect(text).toContain('39 ');
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    expect((await fetch(`${base}/health`)).status).toBe(200);
    expect(logged.some((l) => l.includes('Invalid array length'))).toBe(true);
  });
});
