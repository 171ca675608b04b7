// NOTE(store/trajectories): one trajectory-log request is one transaction (all groups and every
// trajectory, or nothing), so the 200 reply is only sent after the commit reached the disk
// (synchronous=FULL). A group is stored without its trajectories; each trajectory is its own row with
// its full JSON (a Choice item keeps its logprobs). Export puts them back together in received order.
import type { TrajectoryGroup } from '../openai/protocol-trajectory.js';
import type { TrajectoryLogRequest } from '../openai/protocol.js';
import type { Database } from './database.js';

export interface StoredLog {
  logId: number;
  loggedAt: string;
  groups: number;
  trajectories: number;
}

/** Persists the groups of one request in a single transaction. */
export function insertTrajectoryLog(db: Database, model: string, split: string, groups: readonly TrajectoryGroup[], at: Date = new Date()): StoredLog {
  const loggedAt = at.toISOString();
  const insertLog = db.prepare('INSERT INTO trajectory_log (model, split, logged_at, groups, trajectories) VALUES (?, ?, ?, ?, ?)');
  const insertGroup = db.prepare('INSERT INTO trajectory_group (log_id, idx, body) VALUES (?, ?, ?)');
  const insertTrajectory = db.prepare('INSERT INTO trajectory (group_id, idx, reward, body) VALUES (?, ?, ?, ?)');
  const total = groups.reduce((n, g) => n + g.trajectories.length, 0);
  return db.transaction((): StoredLog => {
    const logId = Number(insertLog.run(model, split, loggedAt, groups.length, total).lastInsertRowid);
    groups.forEach((group, gi) => {
      const { trajectories, ...rest } = group;
      const groupId = Number(insertGroup.run(logId, gi, JSON.stringify(rest)).lastInsertRowid);
      trajectories.forEach((t, ti) => insertTrajectory.run(groupId, ti, t.reward, JSON.stringify(t)));
    });
    return { logId, loggedAt, groups: groups.length, trajectories: total };
  })();
}

/** What a stored trajectory-log request answers (docs/http-api.md#trajectory-log), less the model. */
export interface LoggedTrajectories {
  split: string;
  groups: number;
  trajectories: number;
  metrics: Record<string, number>;
}

/** Stores one validated request (one transaction) and computes its metrics. */
export function logTrajectories(db: Database, model: string, request: TrajectoryLogRequest): LoggedTrajectories {
  const { split, trajectory_groups: groups } = request;
  const stored = insertTrajectoryLog(db, model, split, groups);
  return { split, groups: stored.groups, trajectories: stored.trajectories, metrics: trajectoryMetrics(split, groups) };
}

export interface ExportedGroup extends Record<string, unknown> {
  trajectories: unknown[];
  split: string;
  logged_at: string;
}

/** Every stored group of `model` (optionally one split), oldest first, as received plus split and logged_at. */
export function* exportTrajectoryGroups(db: Database, model: string, split?: string): Generator<ExportedGroup> {
  const groups = db.prepare(`SELECT g.id AS id, g.body AS body, l.split AS split, l.logged_at AS logged_at
    FROM trajectory_group g JOIN trajectory_log l ON l.id = g.log_id
    WHERE l.model = ? AND (? IS NULL OR l.split = ?) ORDER BY l.id, g.idx`);
  const trajectories = db.prepare('SELECT body FROM trajectory WHERE group_id = ? ORDER BY idx');
  for (const row of groups.iterate(model, split ?? null, split ?? null) as Iterable<{ id: number; body: string; split: string; logged_at: string }>) {
    const rest = JSON.parse(row.body) as Record<string, unknown>;
    const ts = (trajectories.all(row.id) as { body: string }[]).map((r) => JSON.parse(r.body) as unknown);
    yield { trajectories: ts, ...rest, split: row.split, logged_at: row.logged_at };
  }
}

/**
 * The reply's metrics (docs/http-api.md#trajectory-log): mean reward, reward_std_dev = mean over
 * groups with ≥ 2 trajectories of the population std-dev of their rewards, exception_rate = E / (T + E),
 * and the mean of every trajectory metric (booleans count as 0/1) over the trajectories that have it.
 */
export function trajectoryMetrics(split: string, groups: readonly TrajectoryGroup[]): Record<string, number> {
  let t = 0;
  let e = 0;
  let rewardSum = 0;
  const stds: number[] = [];
  const sums = new Map<string, { sum: number; n: number }>();
  for (const g of groups) {
    e += g.exceptions.length;
    const rewards = g.trajectories.map((tr) => tr.reward);
    t += rewards.length;
    for (const r of rewards) rewardSum += r;
    if (rewards.length >= 2) {
      const mean = rewards.reduce((a, b) => a + b, 0) / rewards.length;
      stds.push(Math.sqrt(rewards.reduce((a, r) => a + (r - mean) ** 2, 0) / rewards.length));
    }
    for (const tr of g.trajectories) {
      for (const [k, v] of Object.entries(tr.metrics)) {
        const s = sums.get(k) ?? { sum: 0, n: 0 };
        s.sum += typeof v === 'boolean' ? (v ? 1 : 0) : Number(v);
        s.n += 1;
        sums.set(k, s);
      }
    }
  }
  const out: Record<string, number> = {
    [`${split}/reward`]: t > 0 ? rewardSum / t : 0,
    [`${split}/reward_std_dev`]: stds.length > 0 ? stds.reduce((a, b) => a + b, 0) / stds.length : 0,
    [`${split}/exception_rate`]: t + e > 0 ? e / (t + e) : 0,
  };
  for (const [k, s] of sums) {
    const key = `${split}/${k}`;
    if (!(key in out)) out[key] = s.sum / s.n;
  }
  return out;
}
