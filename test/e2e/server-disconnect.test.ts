// End to end (bin/tokenmill.cjs serve on stories260K): a client that disconnects leaves nothing of its
// work behind. A request whose chat-template render still waits for a worker (the client's share of the
// pool is busy with template bombs) leaves the pool's line the moment its socket closes and never
// reaches the engine; a request waiting in the engine's queue (--max-num-seqs 1, another stream running)
// leaves the queue, and the KV cache is empty once the running stream ends.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { stories260K } from '../helpers/shared.js';
import { startServer, type RunningServer } from './server-helpers.js';
import { expectIdle, metricValues } from './server-probe.js';

const TEMPLATE_BOMB = "{% for i in range(99999) %}{% for j in range(99999) %}{{ '' }}{% endfor %}{% endfor %}";
const RAW_TEMPLATE = '{{ messages[0].content }}';

const servers: RunningServer[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop('SIGKILL');
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

async function start(extra: string[] = []): Promise<RunningServer> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tm-disconnect-'));
  dirs.push(dataDir);
  const s = await startServer(['--model', stories260K, '--served-model-name', 'm', '--data-dir', dataDir, ...extra]);
  servers.push(s);
  return s;
}

const chat = (s: RunningServer, extra: Record<string, unknown>, signal?: AbortSignal): Promise<Response> =>
  fetch(`${s.base}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'Once upon a time' }], chat_template: RAW_TEMPLATE, ...extra }),
    signal,
  });

async function metrics(s: RunningServer): Promise<(name: string) => number> {
  const text = await (await fetch(`${s.base}/metrics`)).text();
  return (name) => metricValues(text, name)[0]!;
}

/** Polls /metrics until `ok` holds (fails after `ms`). */
async function until(s: RunningServer, what: string, ok: (m: (name: string) => number) => boolean, ms = 10_000): Promise<number> {
  const t0 = performance.now();
  for (;;) {
    if (ok(await metrics(s))) return performance.now() - t0;
    if (performance.now() - t0 > ms) expect.fail(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('e2e: a disconnected client leaves nothing queued', () => {
  it('a render waiting for a worker is dropped when the socket closes and never reaches the engine', async () => {
    const s = await start();
    // Four bombs from this (one, open-server) client: its share of the pool (at most half the workers)
    // renders bombs for 2 s each; the rest wait in line.
    const bombs = Array.from({ length: 4 }, () => chat(s, { chat_template: TEMPLATE_BOMB }).then((r) => r.status));
    await until(s, 'the bombs are running or waiting', (m) => m('tokenmill:work_pool_running') + m('tokenmill:work_pool_waiting') === 4);
    const ac = new AbortController();
    const victim = chat(s, { stream: true, max_tokens: 8 }, ac.signal).catch((e: Error) => e.name);
    await until(s, 'the victim waits for a worker', (m) => m('tokenmill:work_pool_running') + m('tokenmill:work_pool_waiting') === 5);
    const running = (await metrics(s))('tokenmill:work_pool_running');
    ac.abort();
    expect(await victim).toBe('AbortError');
    // It leaves the line at once, while the bombs ahead of it still hold every worker they had.
    const left = await until(s, 'the victim left the line', (m) => m('tokenmill:work_pool_running') + m('tokenmill:work_pool_waiting') === 4, 1500);
    expect(left).toBeLessThan(1500);
    expect((await metrics(s))('tokenmill:work_pool_running')).toBe(running);
    expect(await Promise.all(bombs)).toEqual([400, 400, 400, 400]);
    await expectIdle(s.base);
    const m = await metrics(s);
    // Nothing of the victim reached the engine: no prompt token was ever processed.
    expect(m('vllm:prompt_tokens_total')).toBe(0);
    expect(s.stderr()).not.toMatch(/error: request/);
  }, 60_000);

  it('a request waiting in the engine queue leaves it when the socket closes; the KV cache ends empty', async () => {
    const s = await start(['--max-num-seqs', '1']);
    const running = await chat(s, { stream: true, max_tokens: 400, ignore_eos: true });
    expect(running.status).toBe(200);
    const reader = running.body!.getReader();
    await reader.read();
    const ac = new AbortController();
    const queued = chat(s, { stream: true, max_tokens: 8 }, ac.signal).catch((e: Error) => e.name);
    await until(s, 'the second request waits in the engine queue', (m) => m('vllm:num_requests_waiting') === 1);
    ac.abort();
    expect(await queued).toBe('AbortError');
    await until(s, 'the queue is empty', (m) => m('vllm:num_requests_waiting') === 0, 2000);
    expect((await metrics(s))('vllm:num_requests_running')).toBe(1);
    await reader.cancel();
    await expectIdle(s.base);
  }, 60_000);
});
