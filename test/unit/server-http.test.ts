import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ChatInput } from '../../lib/openai/chat-input.js';
import { openDatabase, type Database } from '../../lib/store/database.js';
import { readUsage } from '../../lib/store/usage.js';
import { exportTrajectoryGroups } from '../../lib/store/trajectories.js';
import { createServer, type TokenmillServer } from '../../lib/server/server.js';
import type { ChatCallOptions, ChatEngineLike, ServerOptions } from '../../lib/server/types.js';
import { KeyChecker, parseProject } from '../../lib/server/auth.js';
import { INLINE_BODY_BYTES } from '../../lib/openai/parse-body.js';
import { PREALLOCATE_AFTER_BYTES, readBody } from '../../lib/server/http-io.js';
import { Readable } from 'node:stream';
import { workPool } from '../../lib/workers/offload.js';

// Response.json() is typed unknown; these tests inspect the bodies freely.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const jsonOf = (r: Response): Promise<any> => r.json();

// A fake chat engine: answers "hello" in two chunks; `slow` streams forever until aborted; `linger` ms
// pass between an abort and the stream's end (an engine finishing its step before the final records).
class FakeEngine implements ChatEngineLike {
  running = 0;
  aborted = 0;
  #idleWaiters: (() => void)[] = [];
  /** Resolves once no stream is running (at once if none is). */
  idle(): Promise<void> {
    return this.running === 0 ? Promise.resolve() : new Promise((resolve) => this.#idleWaiters.push(resolve));
  }
  readonly maxModelLen = 128;
  readonly model = { info: { path: '/models/fake.gguf' } };
  stats() {
    return { running: this.running, waiting: 0, kvCacheUsage: 0.25, kvBlocksTotal: 8, kvBlocksFree: 6, prefixCacheQueries: 3, prefixCacheHits: 1, preemptions: 0, promptTokens: 10, generationTokens: 4 };
  }
  async chat(input: ChatInput, _o?: ChatCallOptions) {
    const r = input.request as { model?: string; priority?: number };
    if (r.priority) throw Object.assign(new Error(`Got priority ${r.priority} but Priority scheduling is not enabled.`), { status: 400, param: 'priority' });
    return {
      id: 'chatcmpl-1', object: 'chat.completion' as const, created: 1, model: r.model ?? 'fake',
      choices: [{ index: 0, message: { role: 'assistant', content: 'hello' }, logprobs: null, finish_reason: 'stop' }],
      usage: { prompt_tokens: 7, completion_tokens: 2, total_tokens: 9, prompt_tokens_details: { cached_tokens: 3 } },
    } as never;
  }
  async *chatStream(input: ChatInput, o?: ChatCallOptions) {
    const r = input.request as { model?: string; slow?: boolean; linger?: number; stream_options?: { include_usage?: boolean } };
    const base = { id: 'chatcmpl-2', object: 'chat.completion.chunk', created: 1, model: r.model ?? 'fake' };
    this.running++;
    try {
      yield { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }] } as never;
      let n = 0;
      do {
        if (o?.signal?.aborted) break;
        yield { ...base, choices: [{ index: 0, delta: { content: 'hel' }, logprobs: null, finish_reason: null }] } as never;
        n++;
        await new Promise((res) => setTimeout(res, 5));
      } while (r.slow);
      const aborted = o?.signal?.aborted === true;
      if (aborted) this.aborted++;
      if (aborted && r.linger) await new Promise((res) => setTimeout(res, r.linger));
      yield { ...base, choices: [{ index: 0, delta: { content: 'lo' }, logprobs: null, finish_reason: aborted ? 'abort' : 'stop' }] } as never;
      if (r.stream_options?.include_usage) yield { ...base, choices: [], usage: { prompt_tokens: 5, completion_tokens: n + 1, total_tokens: n + 6 } } as never;
    } finally {
      this.running--;
      if (this.running === 0) for (const wake of this.#idleWaiters.splice(0)) wake();
    }
  }
}

const dirs: string[] = [];
const servers: TokenmillServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.drain(1000);
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

async function start(extra: Partial<ServerOptions> = {}) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tm-server-'));
  dirs.push(dataDir);
  const engine = new FakeEngine();
  const server = createServer({ models: [{ id: 'fake', engine }], dataDir, usageFlushMs: 20, log: () => undefined, ...extra });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  await server.ready;
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { server, engine, base, dataDir };
}

const json = (body: unknown, headers: Record<string, string> = {}) => ({ method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
const chatBody = { model: 'fake', messages: [{ role: 'user', content: 'hi' }] };

describe('server: auth helpers', () => {
  it('checks bearer keys case-insensitively on the scheme, and only configured keys', () => {
    const k = new KeyChecker(['sk-1', 'sk-2']);
    expect(k.check('Bearer sk-1')).toBe(true);
    expect(k.check('bearer sk-2')).toBe(true);
    expect(k.check('Bearer sk-3')).toBe(false);
    expect(k.check('Basic sk-1')).toBe(false);
    expect(k.check(undefined)).toBe(false);
    expect(new KeyChecker([]).check(undefined)).toBe(true);
  });
  it('parses OpenAI-Project and rejects malformed values', () => {
    expect(parseProject(undefined)).toEqual({ team: 'default', project: 'default' });
    expect(parseProject('acme/web')).toEqual({ team: 'acme', project: 'web' });
    for (const bad of ['acme', '/web', 'acme/', 'a/\u0001', `a/${'x'.repeat(130)}`]) expect(parseProject(bad)).toBeNull();
  });
});

describe('server: routes and errors', () => {
  it('serves models, health, metrics; 404/405 envelopes; trailing slash; X-Request-Id echo', async () => {
    const { base } = await start();
    const models = await jsonOf(await fetch(`${base}/v1/models/`));
    expect(models).toMatchObject({ object: 'list', data: [{ id: 'fake', object: 'model', owned_by: 'tokenmill', root: '/models/fake.gguf', max_model_len: 128 }] });
    expect(Object.keys(models.data[0]).sort()).toEqual(['created', 'id', 'max_model_len', 'object', 'owned_by', 'root']);
    const h = await fetch(`${base}/health`, { headers: { 'x-request-id': 'abc' } });
    expect(h.status).toBe(200);
    expect(h.headers.get('x-request-id')).toBe('abc');
    expect(await jsonOf(h)).toEqual({ status: 'ok' });
    const nf = await fetch(`${base}/nope`);
    expect(nf.status).toBe(404);
    expect((await jsonOf(nf)).error).toMatchObject({ type: 'NotFoundError', code: 404 });
    expect(nf.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const na = await fetch(`${base}/v1/models`, { method: 'DELETE' });
    expect(na.status).toBe(405);
    expect((await jsonOf(na)).error.code).toBe(405);
  });

  it('requires a bearer key on /v1 only, with the 401 envelope', async () => {
    const { base } = await start({ apiKeys: ['sk-test'] });
    const r = await fetch(`${base}/v1/models`);
    expect(r.status).toBe(401);
    expect(await jsonOf(r)).toEqual({ error: { message: 'Invalid or missing API key', type: 'AuthenticationError', param: null, code: 401 } });
    expect((await fetch(`${base}/v1/models`, { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
    expect((await fetch(`${base}/v1/models`, { headers: { authorization: 'bearer sk-test' } })).status).toBe(200);
    // An unknown /v1 path: the key is checked before the route (vLLM's order), so 401 without it, 404 with it.
    expect((await fetch(`${base}/v1/nope`)).status).toBe(401);
    expect((await fetch(`${base}/v1/nope`, { headers: { authorization: 'Bearer sk-test' } })).status).toBe(404);
    expect((await fetch(`${base}/health`)).status).toBe(200);
    expect((await fetch(`${base}/metrics`)).status).toBe(200);
  });

  it('415, 413 (read stops at the limit), 422 json_invalid and validation detail, 404 model, 400 from the engine', async () => {
    const { base } = await start({ maxRequestBytes: 1024 });
    const ct = await fetch(`${base}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{}' });
    expect(ct.status).toBe(415);
    expect((await jsonOf(ct)).error.type).toBe('UnsupportedMediaTypeError');
    const big = await fetch(`${base}/v1/chat/completions`, json({ ...chatBody, pad: 'x'.repeat(5000) }));
    expect(big.status).toBe(413);
    expect((await jsonOf(big)).error.code).toBe(413);
    const bad = await fetch(`${base}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"messages": [' });
    expect(bad.status).toBe(422);
    expect((await jsonOf(bad)).detail[0]).toMatchObject({ type: 'json_invalid', loc: ['body', 14] });
    const v = await fetch(`${base}/v1/chat/completions`, json({ messages: [{ content: 'x' }], temperature: 'hot' }));
    expect(v.status).toBe(422);
    const detail = (await jsonOf(v)).detail as { loc: unknown[] }[];
    expect(detail.map((d) => d.loc)).toEqual(expect.arrayContaining([['body', 'messages', 0, 'role'], ['body', 'temperature']]));
    const nm = await fetch(`${base}/v1/chat/completions`, json({ ...chatBody, model: 'other' }));
    expect(nm.status).toBe(404);
    expect(await jsonOf(nm)).toEqual({ error: { message: 'The model `other` does not exist.', type: 'NotFoundError', param: 'model', code: 404 } });
    const pr = await fetch(`${base}/v1/chat/completions`, json({ ...chatBody, priority: 3 }));
    expect(pr.status).toBe(400);
    expect((await jsonOf(pr)).error).toMatchObject({ type: 'BadRequestError', param: 'priority', code: 400 });
    const proj = await fetch(`${base}/v1/chat/completions`, json(chatBody, { 'openai-project': 'noslash' }));
    expect(proj.status).toBe(400);
    expect((await jsonOf(proj)).error.param).toBe('OpenAI-Project');
  });
});

describe('server: body limit without Content-Length', () => {
  it('stops reading a chunked body at the limit and answers 413', async () => {
    const { base } = await start({ maxRequestBytes: 1000 });
    const url = new URL(`${base}/v1/chat/completions`);
    const reply = await new Promise<{ status: number; body: string; sent: number }>((resolve, reject) => {
      const req = http.request({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' } });
      let sent = 0;
      req.on('response', (res) => {
        let body = '';
        res.on('data', (b: Buffer) => (body += b.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, sent }));
      });
      req.on('error', reject);
      // Keeps sending 512-byte chunks until the server answered (it must not wait for the end).
      const pump = (): void => {
        if (req.destroyed || sent > 1 << 20) return;
        req.write('x'.repeat(512));
        sent += 512;
        setTimeout(pump, 2);
      };
      pump();
    });
    expect(reply.status).toBe(413);
    expect(JSON.parse(reply.body).error.code).toBe(413);
    expect(reply.sent).toBeLessThan(1 << 20);
  });
});

describe('server: chat, usage, metrics', () => {
  it('answers non-stream and stream chat, counts usage per project, hides the usage chunk unless asked', async () => {
    const { base, server, dataDir } = await start();
    const r = await fetch(`${base}/v1/chat/completions`, json(chatBody, { 'openai-project': 'acme/web' }));
    expect(r.status).toBe(200);
    expect((await jsonOf(r)).choices[0].message.content).toBe('hello');
    const s = await fetch(`${base}/v1/chat/completions`, json({ ...chatBody, stream: true }));
    expect(s.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = (await s.text()).split('\n\n').filter(Boolean);
    expect(events.at(-1)).toBe('data: [DONE]');
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e.slice(6)));
    expect(chunks.map((c) => c.choices[0]?.delta.content).join('')).toBe('hello');
    expect(chunks.every((c) => c.usage === undefined)).toBe(true);
    const su = await fetch(`${base}/v1/chat/completions`, json({ ...chatBody, stream: true, stream_options: { include_usage: true } }));
    const last = (await su.text()).split('\n\n').filter(Boolean).slice(-2)[0]!;
    expect(JSON.parse(last.slice(6))).toMatchObject({ choices: [], usage: { prompt_tokens: 5 } });
    await server.drain(1000);
    const db = openDatabase(dataDir);
    expect(readUsage(db).map(({ day: _d, ...rest }) => rest)).toEqual([
      { team: 'acme', project: 'web', model: 'fake', requests: 1, prompt_tokens: 7, cached_tokens: 3, completion_tokens: 2 },
      { team: 'default', project: 'default', model: 'fake', requests: 2, prompt_tokens: 10, cached_tokens: 0, completion_tokens: 4 },
    ]);
    db.close();
  });

  it('a client disconnect mid-stream aborts the request; metrics show it finished as abort with 0 running', async () => {
    const { base, engine } = await start();
    const ac = new AbortController();
    const s = await fetch(`${base}/v1/chat/completions`, { ...json({ ...chatBody, stream: true, slow: true }), signal: ac.signal });
    const reader = s.body!.getReader();
    await reader.read();
    expect(engine.running).toBe(1);
    ac.abort();
    await engine.idle();
    expect(engine.running).toBe(0);
    expect(engine.aborted).toBe(1);
    const text = await (await fetch(`${base}/metrics`)).text();
    expect(text).toContain('# TYPE vllm:num_requests_running gauge');
    expect(text).toContain('vllm:num_requests_running{model_name="fake"} 0');
    expect(text).toContain('vllm:request_success_total{model_name="fake",finished_reason="abort"} 1');
    expect(text).toContain('vllm:kv_cache_usage_perc{model_name="fake"} 0.25');
    expect(text).toContain('vllm:cache_config_info{model_name="fake",block_size="16",num_gpu_blocks="8"} 1');
    expect(text).toMatch(/vllm:e2e_request_latency_seconds_bucket\{model_name="fake",le="\+Inf"\} 1\n/);
    expect(text).toMatch(/vllm:e2e_request_latency_seconds_count\{model_name="fake"\} 1\n/);
    expect(text).toContain('# TYPE vllm:time_to_first_token_seconds histogram');
  });

  it('drain waits for a request whose client left to count its usage before the last flush', async () => {
    // The client leaves mid-stream as the drain starts: its response closes at once, while its engine
    // request takes 300 ms more to end and give its usage. Before the fix the drain, seeing no open
    // response, waited 50 ms and closed the store: that usage was lost.
    const { base, server, engine, dataDir } = await start();
    const ac = new AbortController();
    const s = await fetch(`${base}/v1/chat/completions`, { ...json({ ...chatBody, stream: true, slow: true, linger: 300 }), signal: ac.signal });
    await s.body!.getReader().read();
    ac.abort();
    await server.drain(10_000);
    expect(engine.aborted).toBe(1);
    expect(engine.running).toBe(0);
    const db = openDatabase(dataDir);
    expect(readUsage(db).map(({ team, requests, prompt_tokens }) => ({ team, requests, prompt_tokens }))).toEqual([{ team: 'default', requests: 1, prompt_tokens: 5 }]);
    db.close();
  });

  it('drain past its timeout aborts a running stream, which still gets its final chunk and [DONE]', async () => {
    const { base, server, dataDir } = await start();
    const s = await fetch(`${base}/v1/chat/completions`, json({ ...chatBody, stream: true, slow: true }));
    const text = s.text();
    const t0 = performance.now();
    await server.drain(100);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(95);
    const events = (await text).split('\n\n').filter(Boolean);
    expect(events.at(-1)).toBe('data: [DONE]');
    expect(JSON.parse(events.at(-2)!.slice(6)).choices[0].finish_reason).toBe('abort');
    const db = openDatabase(dataDir);
    expect(readUsage(db).map(({ requests }) => requests)).toEqual([1]);
    db.close();
  });

  it('health is 503 while models load and while draining', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tm-server-'));
    dirs.push(dataDir);
    let resolve!: (v: { id: string; engine: ChatEngineLike }[]) => void;
    const server = createServer({ models: new Promise((r) => (resolve = r)), dataDir, log: () => undefined });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    expect((await fetch(`${base}/health`)).status).toBe(503);
    expect((await fetch(`${base}/v1/models`)).status).toBe(503);
    resolve([{ id: 'fake', engine: new FakeEngine() }]);
    await server.ready;
    expect((await fetch(`${base}/health`)).status).toBe(200);
  });
});

describe('server: reading bodies', () => {
  /** A request of `chunks` with the given Content-Length (none: chunked). */
  const request = (chunks: Buffer[], length?: number): http.IncomingMessage =>
    Object.assign(Readable.from(chunks), { headers: length === undefined ? {} : { 'content-length': String(length) } }) as unknown as http.IncomingMessage;
  const bytes = (n: number, seed: number): Buffer => Buffer.from(Array.from({ length: n }, (_, i) => (i * 31 + seed) & 255));

  it('past PREALLOCATE_AFTER_BYTES a declared body lands in one buffer of its own; smaller or undeclared ones are joined; the bytes are the same', async () => {
    const chunks = Array.from({ length: 40 }, (_, i) => bytes(64 * 1024 + i, i)); // 2.6 MB in uneven chunks
    const all = Buffer.concat(chunks);
    expect(all.length).toBeGreaterThan(PREALLOCATE_AFTER_BYTES);
    const declared = await readBody(request(chunks, all.length), 8 << 20);
    expect(declared.equals(all)).toBe(true);
    expect(declared.byteOffset === 0 && declared.byteLength === declared.buffer.byteLength).toBe(true);
    expect((await readBody(request(chunks), 8 << 20)).equals(all)).toBe(true);
    const small = chunks.slice(0, 3);
    expect((await readBody(request(small, Buffer.concat(small).length), 8 << 20)).equals(Buffer.concat(small))).toBe(true);
    // A body that ends short of its declared length gives what came.
    expect((await readBody(request(chunks, all.length + 10), 8 << 20)).equals(all)).toBe(true);
  });
});

describe('server: large bodies are parsed and validated off the event loop', () => {
  it('bodies over INLINE_BODY_BYTES go to the work pool, smaller ones stay inline; the answers are the same', async () => {
    const { base } = await start();
    const run = vi.spyOn(workPool(), 'run');
    try {
      const pad = (chars: number) => [{ role: 'user', content: 'x'.repeat(chars) }];
      const small = await fetch(`${base}/v1/chat/completions`, json({ ...chatBody, messages: pad(1000) }));
      expect(small.status).toBe(200);
      expect(run.mock.calls.filter((c) => c[0] === 'request-body')).toHaveLength(0);
      const large = await fetch(`${base}/v1/chat/completions`, json({ ...chatBody, messages: pad(INLINE_BODY_BYTES) }));
      expect(large.status).toBe(200);
      expect((await jsonOf(large)).choices[0].message.content).toBe('hello');
      expect(run.mock.calls.filter((c) => c[0] === 'request-body')).toHaveLength(1);
      // It came back split, its conversation packed (lib/openai/chat-input.ts): no message object of it
      // was ever made on the event loop.
      const parsed = (await run.mock.results[run.mock.calls.findIndex((c) => c[0] === 'request-body')]!.value) as { value: { conversation: { packed?: unknown } } };
      expect(parsed.value.conversation.packed).toBeInstanceOf(Uint8Array);
      // The same violations, in the same words, whichever way the body went.
      const bad = (chars: number) => ({ ...chatBody, messages: [...pad(chars), { role: 'nobody' }], temperature: 'hot' });
      const inline = await fetch(`${base}/v1/chat/completions`, json(bad(10)));
      const offloaded = await fetch(`${base}/v1/chat/completions`, json(bad(INLINE_BODY_BYTES)));
      expect(offloaded.status).toBe(422);
      expect(await jsonOf(offloaded)).toEqual(await jsonOf(inline));
      const broken = await fetch(`${base}/v1/chat/completions`, { ...json({}), body: `{"messages": "${'y'.repeat(INLINE_BODY_BYTES)}` });
      expect(broken.status).toBe(422);
      expect((await jsonOf(broken)).detail[0]).toMatchObject({ type: 'json_invalid', msg: 'JSON decode error' });
      const log = await fetch(`${base}/v1/preview/models/fake/log`, json({ split: 'val', trajectory_groups: [{ trajectories: [{ reward: 1, messages_and_choices: pad(INLINE_BODY_BYTES) }] }] }));
      expect(log.status).toBe(200);
      expect(run.mock.calls.filter((c) => c[0] === 'request-body')).toHaveLength(3);
      // A trajectory log on the server's own database is parsed, checked and written by a worker's
      // connection, whatever its size (log-route.ts): only the reply's numbers come back.
      expect(run.mock.calls.filter((c) => c[0] === 'trajectory-log')).toHaveLength(1);
      expect(await jsonOf(log)).toMatchObject({ object: 'trajectory_log', model: 'fake', split: 'val', groups: 1, trajectories: 1 });
    } finally {
      run.mockRestore();
    }
  });
});

describe('server: trajectory log', () => {
  it('stores a log in one transaction and replies with metrics; 422 and 404', async () => {
    const { base, dataDir, server } = await start();
    const body = { model_id: 'fake', split: 'val', trajectory_groups: [{ trajectories: [{ reward: 1, messages_and_choices: [{ role: 'user', content: 'q' }] }, { reward: 0 }], exceptions: [] }] };
    const r = await fetch(`${base}/v1/preview/models/fake/log`, json(body));
    expect(r.status).toBe(200);
    expect(await jsonOf(r)).toEqual({ object: 'trajectory_log', model: 'fake', split: 'val', groups: 1, trajectories: 2, metrics: { 'val/reward': 0.5, 'val/reward_std_dev': 0.5, 'val/exception_rate': 0 } });
    const bad = await fetch(`${base}/v1/preview/models/fake/log`, json({ trajectory_groups: [{ trajectories: [{ reward: 'x' }] }] }));
    expect(bad.status).toBe(422);
    const locs = ((await jsonOf(bad)).detail as { loc: unknown[] }[]).map((d) => d.loc);
    expect(locs).toEqual(expect.arrayContaining([['body', 'split'], ['body', 'trajectory_groups', 0, 'trajectories', 0, 'reward']]));
    const nf = await fetch(`${base}/v1/preview/models/other/log`, json(body));
    expect(nf.status).toBe(404);
    await server.drain(1000);
    const db = openDatabase(dataDir);
    expect([...exportTrajectoryGroups(db, 'fake')]).toHaveLength(1);
    db.close();
  });
});

describe('server: full disk', () => {
  // SQLite answers SQLITE_FULL both when the file system reports ENOSPC and when the database reaches
  // its max_page_count: capping the pages at what the file holds now and filling what is left takes the
  // same path a full disk does, without root or a tiny file system. The filler rows have the length of
  // the usage row the test's requests make and sort before it (day 0000-00-00), inserted in ascending
  // order: each lands in the right-most leaf, where that usage row must go, so the fill stops exactly
  // when that leaf has no room for it and no page is left to split it.
  function fill(db: Database): void {
    db.pragma(`max_page_count = ${db.pragma('page_count', { simple: true }) as number}`);
    const insert = db.prepare(`INSERT INTO usage (day, team, project, model) VALUES ('0000-00-00', 'acme', 'full', ?)`);
    let filled = 0;
    try {
      for (;;) insert.run((filled++).toString(36).padStart(4, '0'));
    } catch (error) {
      expect((error as { code?: string }).code).toBe('SQLITE_FULL');
    }
    expect(filled).toBeGreaterThan(1);
  }

  it('the log endpoint answers 503 SQLITE_FULL, inference keeps serving, nothing acknowledged is lost; writes resume when space returns', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tm-full-'));
    dirs.push(dataDir);
    const db = openDatabase(dataDir);
    const logged: string[] = [];
    const { base, server } = await start({ database: db, log: (_l, m) => logged.push(m) });
    const log = (reward: number) => fetch(`${base}/v1/preview/models/fake/log`, json({ split: 'val', trajectory_groups: [{ trajectories: [{ reward, messages_and_choices: [{ role: 'user', content: 'x'.repeat(6000) }] }] }] }));
    expect((await log(1)).status).toBe(200);
    const pages = db.pragma('page_count', { simple: true }) as number;
    fill(db);

    const full = await log(2);
    expect(full.status).toBe(503);
    expect(full.headers.get('retry-after')).toBe('5');
    expect((await jsonOf(full)).error).toMatchObject({ type: 'ServiceUnavailableError', message: expect.stringContaining('SQLITE_FULL') });
    for (let i = 0; i < 3; i++) expect((await fetch(`${base}/v1/chat/completions`, json(chatBody, { 'OpenAI-Project': 'acme/full' }))).status).toBe(200);
    expect((await fetch(`${base}/health`)).status).toBe(200);
    // The usage flush (every 20 ms here) fails and keeps its rows for the next attempt.
    const deadline = Date.now() + 5000;
    while (!logged.some((l) => l.includes('usage could not be written yet') && l.includes('full')) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(logged.find((l) => l.includes('usage could not be written yet'))).toMatch(/full/);
    expect(readUsage(db, '0001-01-01')).toEqual([]);

    // Space comes back: the pending usage is written, the log endpoint stores again.
    db.pragma(`max_page_count = ${pages + 1000}`);
    expect((await log(3)).status).toBe(200);
    await server.drain(1000);
    expect(readUsage(db, '0001-01-01')).toEqual([expect.objectContaining({ team: 'acme', project: 'full', model: 'fake', requests: 3, prompt_tokens: 21, completion_tokens: 6 })]);
    expect([...exportTrajectoryGroups(db, 'fake')].map((g) => (g as { trajectories: { reward: number }[] }).trajectories[0]!.reward)).toEqual([1, 3]);
    db.close();
  });
});
