import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase, SCHEMA_VERSION } from '../../lib/store/database.js';
import { exportTrajectoryGroups, insertTrajectoryLog, trajectoryMetrics } from '../../lib/store/trajectories.js';
import { readUsage, UsageRecorder } from '../../lib/store/usage.js';
import { validateTrajectoryLog } from '../../lib/openai/validate.js';
import type { TrajectoryGroup } from '../../lib/openai/protocol-trajectory.js';

const dirs: string[] = [];
const tmp = (): string => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'tm-store-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

const groups = (body: unknown): TrajectoryGroup[] => {
  const v = validateTrajectoryLog(body);
  if (!v.ok) throw new Error(JSON.stringify(v.detail));
  return v.value.trajectory_groups;
};

describe('store: database', () => {
  it('opens with WAL, synchronous=FULL and the current schema version; reopening migrates nothing', () => {
    const dir = tmp();
    const db = openDatabase(dir);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('synchronous', { simple: true })).toBe(2);
    expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    db.close();
    const again = openDatabase(dir);
    expect(again.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    again.close();
  });

  it('refuses a database from a newer tokenmill', () => {
    const dir = tmp();
    const db = openDatabase(dir);
    db.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    db.close();
    expect(() => openDatabase(dir)).toThrow(/newer/);
  });
});

describe('store: usage', () => {
  it('batches rows in memory and adds them up per (day, team, project, model) on flush', () => {
    const db = openDatabase(tmp());
    const rec = new UsageRecorder(db, 60_000);
    const at = new Date('2026-01-02T10:00:00Z');
    rec.record({ team: 't', project: 'p', model: 'm', promptTokens: 10, cachedTokens: 2, completionTokens: 5 }, at);
    rec.record({ team: 't', project: 'p', model: 'm', promptTokens: 1, cachedTokens: 0, completionTokens: 1 }, at);
    rec.record({ team: 'default', project: 'default', model: 'm', promptTokens: 3, cachedTokens: 0, completionTokens: 0 }, new Date('2026-01-03T00:00:00Z'));
    expect(readUsage(db)).toEqual([]);
    rec.flush();
    rec.record({ team: 't', project: 'p', model: 'm', promptTokens: 100, cachedTokens: 0, completionTokens: 0 }, at);
    rec.close();
    expect(readUsage(db)).toEqual([
      { day: '2026-01-02', team: 't', project: 'p', model: 'm', requests: 3, prompt_tokens: 111, cached_tokens: 2, completion_tokens: 6 },
      { day: '2026-01-03', team: 'default', project: 'default', model: 'm', requests: 1, prompt_tokens: 3, cached_tokens: 0, completion_tokens: 0 },
    ]);
    expect(readUsage(db, '2026-01-03').map((r) => r.day)).toEqual(['2026-01-03']);
    db.close();
  });
});

describe('store: a timed usage flush never waits for a lock', () => {
  it('fails at once while another connection writes, keeps its rows, reports only unannounced locks, writes once the lock is gone', async () => {
    const dir = tmp();
    const db = openDatabase(dir); // busy_timeout 5000: a flush that waited would hold the event loop 5 s
    const other = openDatabase(dir);
    const tick = 30;
    const errors: string[] = [];
    const rec = new UsageRecorder(db, tick, (e) => errors.push(String((e as { code?: unknown }).code)));
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    // Polled rather than timed: on a busy machine the timer runs late.
    const until = async (done: () => boolean): Promise<void> => {
      const started = performance.now();
      while (performance.now() - started < 5000 && !done()) await sleep(5);
      expect(done()).toBe(true);
    };
    const requests = (): number | undefined => readUsage(db)[0]?.requests;

    // This process's write on another connection (a worker's trajectory log), announced: no warning.
    other.exec('BEGIN IMMEDIATE');
    let finish!: () => void;
    const write = rec.writesElsewhere(new Promise<void>((resolve) => (finish = resolve)));
    rec.record({ team: 't', project: 'p', model: 'm', promptTokens: 1, cachedTokens: 0, completionTokens: 1 });
    const started = performance.now();
    await sleep(tick * 4);
    expect(performance.now() - started).toBeLessThan(2500); // four ticks, none waited the 5 s busy timeout
    expect(requests()).toBeUndefined();
    expect(errors).toEqual([]);
    other.exec('COMMIT');
    finish();
    await write;
    await until(() => requests() === 1); // a following tick wrote it
    expect(db.pragma('busy_timeout', { simple: true })).toBe(5000); // the connection's own timeout is back

    // A lock nobody announced (another process): reported, the rows kept, written after it.
    other.exec('BEGIN IMMEDIATE');
    rec.record({ team: 't', project: 'p', model: 'm', promptTokens: 1, cachedTokens: 0, completionTokens: 1 });
    await until(() => errors.length > 0);
    expect(errors[0]).toBe('SQLITE_BUSY');
    expect(requests()).toBe(1);
    other.exec('COMMIT');
    await until(() => requests() === 2);
    rec.close();
    other.close();
    db.close();
  });
});

describe('store: trajectories', () => {
  it('round-trips groups with ART defaults, extra fields and logprobs; filters by model and split', () => {
    const db = openDatabase(tmp());
    const choice = { index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'hi' }, logprobs: { content: [{ token: 'hi', logprob: -0.5, bytes: [104, 105], top_logprobs: [] }] } };
    const g = groups({ split: 'train', trajectory_groups: [
      { trajectories: [{ messages_and_choices: [{ role: 'user', content: 'q' }, choice], reward: 1, extra_key: 7 }, { reward: 0 }], exceptions: [], metadata: { a: 1 } },
    ] });
    insertTrajectoryLog(db, 'm1', 'train', g, new Date('2026-01-02T03:04:05Z'));
    insertTrajectoryLog(db, 'm1', 'val', groups({ split: 'val', trajectory_groups: [{ trajectories: [{ reward: 0.5 }] }] }));
    insertTrajectoryLog(db, 'm2', 'train', groups({ split: 'train', trajectory_groups: [{ trajectories: [{ reward: 0.5 }] }] }));
    const out = [...exportTrajectoryGroups(db, 'm1', 'train')];
    expect(out).toHaveLength(1);
    expect(out[0]!.split).toBe('train');
    expect(out[0]!.logged_at).toBe('2026-01-02T03:04:05.000Z');
    expect(out[0]!.metadata).toEqual({ a: 1 });
    const [t0, t1] = out[0]!.trajectories as Record<string, unknown>[];
    expect(t0!.extra_key).toBe(7);
    expect((t0!.messages_and_choices as unknown[])[1]).toEqual(choice);
    expect(t1).toMatchObject({ reward: 0, messages_and_choices: [], tools: null, additional_histories: [], metrics: {}, metadata: {}, logs: [], initial_policy_version: null });
    expect([...exportTrajectoryGroups(db, 'm1')].map((x) => x.split)).toEqual(['train', 'val']);
    expect([...exportTrajectoryGroups(db, 'nope')]).toEqual([]);
    db.close();
  });

  it('stores a request of 1,000 trajectories whole, or nothing when one row fails', () => {
    const db = openDatabase(tmp());
    const many = groups({ split: 'train', trajectory_groups: Array.from({ length: 10 }, () => ({ trajectories: Array.from({ length: 100 }, (_, i) => ({ reward: i })) })) });
    const stored = insertTrajectoryLog(db, 'm', 'train', many);
    expect(stored).toMatchObject({ groups: 10, trajectories: 1000 });
    expect(db.prepare('SELECT count(*) AS n FROM trajectory').get()).toEqual({ n: 1000 });
    // A reward that SQLite refuses (NOT NULL) in the last trajectory: nothing of the request remains.
    const broken = groups({ split: 'train', trajectory_groups: Array.from({ length: 10 }, () => ({ trajectories: Array.from({ length: 100 }, (_, i) => ({ reward: i })) })) });
    (broken[9]!.trajectories[99] as { reward: unknown }).reward = null;
    expect(() => insertTrajectoryLog(db, 'm', 'train', broken)).toThrow();
    expect(db.prepare('SELECT count(*) AS n FROM trajectory').get()).toEqual({ n: 1000 });
    expect(db.prepare('SELECT count(*) AS n FROM trajectory_log').get()).toEqual({ n: 1 });
    db.close();
  });

  it('computes reward mean, per-group population std-dev, exception rate and metric means', () => {
    const g = groups({ split: 'val', trajectory_groups: [
      { trajectories: [{ reward: 1, metrics: { acc: 1, ok: true } }, { reward: 0, metrics: { acc: 0, ok: false } }], exceptions: [{ type: 'E', message: 'm', traceback: '' }] },
      { trajectories: [{ reward: 4, metrics: { acc: 0.5 } }] },
    ] });
    const m = trajectoryMetrics('val', g);
    expect(m['val/reward']).toBeCloseTo(5 / 3);
    expect(m['val/reward_std_dev']).toBeCloseTo(0.5); // only the first group has >= 2 trajectories
    expect(m['val/exception_rate']).toBeCloseTo(1 / 4);
    expect(m['val/acc']).toBeCloseTo(0.5);
    expect(m['val/ok']).toBeCloseTo(0.5);
  });
});
