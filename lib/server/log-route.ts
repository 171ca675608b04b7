// NOTE(server/log-route): POST /v1/preview/models/{model_id}/log (docs/http-api.md#trajectory-log).
// The body arrives validated against the trajectory schema of lib/openai (422 with every violation, in
// body-parse.ts), then the path's model must be served (404), then the store must be open (503), then the
// whole request is one SQLite transaction; the 200 reply is written only after it committed, and carries
// the computed metrics.
import type { ServerResponse } from 'node:http';
import type { TrajectoryLogRequest } from '../openai/protocol.js';
import type { Database } from '../store/database.js';
import { insertTrajectoryLog, trajectoryMetrics } from '../store/trajectories.js';
import { HttpError, sendJson } from './http-io.js';
import type { ServedModel } from './types.js';

export interface LogContext {
  res: ServerResponse;
  /** The validated request (body-parse.ts). */
  request: TrajectoryLogRequest;
  modelId: string;
  models: readonly ServedModel[];
  /** The database, or a 503 HttpError when it cannot be opened (checked after the 404). */
  openStore: () => Database;
  headers: Record<string, string>;
}

export function handleTrajectoryLog(ctx: LogContext): void {
  if (!ctx.models.some((m) => m.id === ctx.modelId)) throw new HttpError(404, `The model \`${ctx.modelId}\` does not exist.`, 'model_id');
  const { split, trajectory_groups: groups } = ctx.request;
  const db = ctx.openStore();
  let stored: ReturnType<typeof insertTrajectoryLog>;
  try {
    stored = insertTrajectoryLog(db, ctx.modelId, split, groups);
  } catch (error) {
    // SQLite could not write (disk full, read-only file system, locked by another process, I/O error):
    // nothing was committed, the client may retry.
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && code.startsWith('SQLITE_')) {
      throw new HttpError(503, `The trajectory store cannot write right now (${code}): ${(error as Error).message}`, null, { 'Retry-After': '5' });
    }
    throw error;
  }
  sendJson(ctx.res, 200, {
    object: 'trajectory_log',
    model: ctx.modelId,
    split,
    groups: stored.groups,
    trajectories: stored.trajectories,
    metrics: trajectoryMetrics(split, groups),
  }, ctx.headers);
}
