// Faults through the real server on stories260K: a KV cache far too small for the load (preemption
// storm), SIGTERM during 32 active streams, kill -9 after trajectory 200s and after usage was reported,
// an unusable data dir, and the database locked by another process. (Closing an engine while busy:
// test/native/engine-lifecycle.test.ts.)
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { stories260K } from '../helpers/shared.js';
import { cli, repoRoot, startServer, type RunningServer } from './server-helpers.js';
import { expectIdle, metricValues, postChat } from './server-probe.js';

const dirs: string[] = [];
const servers: RunningServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop('SIGKILL');
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function tmp(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'tm-faults-'));
  dirs.push(d);
  return d;
}

async function start(args: string[]): Promise<RunningServer> {
  const s = await startServer(['--model', stories260K, '--served-model-name', 'm', ...args]);
  servers.push(s);
  return s;
}

const body = (extra: Record<string, unknown> = {}) =>
  JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'Once upon a time' }], chat_template: '{{ messages[0].content }}', max_tokens: 8, ...extra });
const logBody = (reward: number) => JSON.stringify({ split: 'val', trajectory_groups: [{ trajectories: [{ messages_and_choices: [{ role: 'user', content: 'x' }], reward }] }] });
const postLog = (s: RunningServer, reward: number) =>
  fetch(`${s.base}/v1/preview/models/m/log`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: logBody(reward) });

type UsageRow = { requests: number; completion_tokens: number };
const usageRows = (dataDir: string): UsageRow[] => JSON.parse(cli(['usage', '--data-dir', dataDir, '--json'])) as UsageRow[];
const sum = (rows: UsageRow[], k: keyof UsageRow) => rows.reduce((a, r) => a + r[k], 0);

/** A stream's events (the `data:` payloads) as they arrived. */
async function streamEvents(s: RunningServer, extra: Record<string, unknown>, onFirst: () => void): Promise<string[]> {
  const r = await fetch(`${s.base}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: body({ stream: true, ...extra }) });
  expect(r.status).toBe(200);
  const reader = r.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let first = false;
  for (;;) {
    const { done, value } = await reader.read().catch(() => ({ done: true, value: undefined }));
    if (done) break;
    text += decoder.decode(value, { stream: true });
    if (!first && text.includes('\n\n')) {
      first = true;
      onFirst();
    }
  }
  return text.split('\n\n').filter((e) => e.startsWith('data: ')).map((e) => e.slice(6));
}

describe('e2e faults', () => {
  it('KV cache far too small: a preemption storm, every request completes, every block free afterwards', async () => {
    const s = await start(['--data-dir', tmp(), '--kv-cache-memory', '400KiB', '--max-num-seqs', '16', '--threads', '1']);
    const replies = await Promise.all(Array.from({ length: 16 }, (_, i) =>
      postChat(s.base, body({ max_tokens: 96, ignore_eos: true, temperature: 1, seed: i }), {}, 120_000)));
    for (const r of replies) {
      expect(r.status, r.body).toBe(200);
      expect(JSON.parse(r.body).usage.completion_tokens).toBe(96);
    }
    const metrics = await (await fetch(`${s.base}/metrics`)).text();
    expect(metricValues(metrics, 'vllm:num_preemptions_total')[0]).toBeGreaterThan(0);
    await expectIdle(s.base);
  }, 180_000);

  it('SIGTERM during 32 active streams: each ends with a final chunk or an error event and [DONE]; exit 0; usage flushed', async () => {
    const dataDir = tmp();
    const s = await start(['--data-dir', dataDir, '--drain-timeout', '0.1', '--threads', '1']);
    let started = 0;
    let signal: () => void = () => undefined;
    const allStarted = new Promise<void>((r) => (signal = r));
    const streams = Array.from({ length: 32 }, (_, i) => streamEvents(s, { max_tokens: 2000, ignore_eos: true, temperature: 1, seed: i }, () => {
      if (++started === 32) signal();
    }));
    await allStarted;
    const code = s.stop('SIGTERM');
    const results = await Promise.all(streams);
    expect(await code).toBe(0);
    const reasons = new Set<string>();
    for (const events of results) {
      expect(events.at(-1)).toBe('[DONE]');
      for (const e of events.slice(0, -1)) for (const c of (JSON.parse(e) as { choices?: { finish_reason: string | null }[] }).choices ?? []) if (c.finish_reason) reasons.add(c.finish_reason);
      const final = events.slice(0, -1).map((e) => JSON.parse(e) as { error?: unknown; choices?: { finish_reason: string | null }[] });
      expect(final.some((e) => e.error !== undefined || e.choices?.some((c) => c.finish_reason !== null))).toBe(true);
    }
    // The drain timeout ran out while they ran: the server aborted them, and they still got final chunks.
    expect(reasons).toContain('abort');
    const rows = usageRows(dataDir);
    expect(sum(rows, 'requests')).toBe(32);
    expect(sum(rows, 'completion_tokens')).toBeGreaterThan(32);
  }, 120_000);

  it('kill -9 after trajectory 200s and after usage was reported: nothing is lost', async () => {
    const dataDir = tmp();
    const s = await start(['--data-dir', dataDir]);
    for (const reward of [1, 2, 3]) expect((await postLog(s, reward)).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await postChat(s.base, body())).status).toBe(200);
    // Usage is flushed once a second: wait until the store reports it, then kill.
    const deadline = Date.now() + 10_000;
    while (sum(usageRows(dataDir), 'requests') < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    expect(sum(usageRows(dataDir), 'requests')).toBe(3);
    expect(await s.stop('SIGKILL')).toBeNull();
    const lines = cli(['trajectories', 'export', '--model', 'm', '--data-dir', dataDir]).trim().split('\n');
    expect(lines.map((l) => (JSON.parse(l) as { trajectories: { reward: number }[] }).trajectories[0]!.reward)).toEqual([1, 2, 3]);
    expect(sum(usageRows(dataDir), 'requests')).toBe(3);
  }, 60_000);

  it('a data dir that cannot be created: inference serves, the log endpoint answers 503 naming the cause', async () => {
    const file = path.join(tmp(), 'not-a-dir');
    fs.writeFileSync(file, '');
    const s = await start(['--data-dir', path.join(file, 'data')]);
    expect((await postChat(s.base, body())).status).toBe(200);
    const log = await postLog(s, 1);
    expect(log.status).toBe(503);
    expect(log.headers.get('retry-after')).toBe('5');
    expect(((await log.json()) as { error: { message: string; type: string } }).error).toMatchObject({ type: 'ServiceUnavailableError', message: expect.stringContaining('ENOTDIR') });
    expect((await fetch(`${s.base}/health`)).status).toBe(200);
    expect(s.stderr()).toContain('the database cannot be opened');
  }, 60_000);

  it('the database locked by another process: the log endpoint answers 503 at once, inference keeps serving, writes resume after', async () => {
    const dataDir = tmp();
    const s = await start(['--data-dir', dataDir]);
    expect((await postLog(s, 1)).status).toBe(200);
    const holder = spawn(process.execPath, ['-e', `
      const Db = require('better-sqlite3');
      const db = new Db(${JSON.stringify(path.join(dataDir, 'tokenmill.db'))});
      db.exec('BEGIN EXCLUSIVE');
      process.stdout.write('locked\\n');
      process.stdin.once('data', () => { db.exec('COMMIT'); process.exit(0); });
    `], { cwd: repoRoot, stdio: ['pipe', 'pipe', 'inherit'] });
    await new Promise<void>((resolve) => holder.stdout!.once('data', () => resolve()));
    const t0 = performance.now();
    const locked = await postLog(s, 2);
    expect(locked.status).toBe(503);
    expect(((await locked.json()) as { error: { message: string } }).error.message).toMatch(/SQLITE_BUSY/);
    expect(performance.now() - t0).toBeLessThan(2000);
    const chat = await postChat(s.base, body());
    expect(chat.status).toBe(200);
    // The holder keeps the lock until told to let go: nothing here waits a fixed time.
    const released = new Promise<void>((resolve) => holder.once('exit', () => resolve()));
    holder.stdin!.end('release\n');
    await released;
    expect((await postLog(s, 3)).status).toBe(200);
    const rewards = cli(['trajectories', 'export', '--model', 'm', '--data-dir', dataDir]).trim().split('\n').map((l) => (JSON.parse(l) as { trajectories: { reward: number }[] }).trajectories[0]!.reward);
    expect(rewards).toEqual([1, 3]);
  }, 60_000);
});
