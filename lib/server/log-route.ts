// NOTE(server/log-route): POST /v1/preview/models/{model_id}/log (docs/http-api.md#trajectory-log).
// The body is validated against the trajectory schema of lib/openai (422 with every violation), then the
// path's model must be served (404), then the store must be open (503), then the whole request is one
// SQLite transaction; the 200 reply is written only after it committed, and carries the computed metrics.
// A body can hold tens of thousands of trajectories, each a row: on the event loop, cloning, validating,
// serialising and inserting 60k of them held it for 0.5-0.9 s (measured). So when the server owns its
// database, the whole request — parse, validation, the checks, the transaction — runs on a work-pool
// worker with a connection of its own (opened and closed per request: ~2 ms), and only the reply's
// numbers come back. These requests take turns (logGate). The usage recorder's timed flush never waits
// for the worker's write lock (it fails at once and retries on the next tick, without a warning while
// the write is announced: UsageRecorder writesElsewhere). A database an embedder passed in is written
// on the event loop, after the body was parsed as any other.
import type { ServerResponse } from 'node:http';
import type { Database } from '../store/database.js';
import { logTrajectories } from '../store/trajectories.js';
import type { LoggedTrajectories } from '../store/trajectories.js';
import type { UsageRecorder } from '../store/usage.js';
import { FairGate } from '../workers/fair-gate.js';
import { workPool } from '../workers/offload.js';
import type { TrajectoryLogOutcome, TrajectoryLogPayload } from '../workers/work-handlers.js';
import { WorkLimitError, WorkTaskError } from '../workers/work-pool.js';
import { parseBody } from './body-parse.js';
import type { BodyParseOptions } from './body-parse.js';
import { HttpError, sendJson, sendValidation } from './http-io.js';
import type { ServedModel } from './types.js';

/**
 * The server's own trajectory writes take turns (one at a time, fair between clients): a worker's
 * connection waits only briefly for a lock (SERVER_BUSY_TIMEOUT_MS), so two of them writing at once
 * would refuse each other.
 */
let logTurns: FairGate | null = null;
function logGate(): FairGate {
  logTurns ??= new FairGate({ slots: 1, perClient: 1, waitingPerClient: 32, waitingTotal: 256, retryAfterSeconds: 5 }, 'trajectory logging');
  return logTurns;
}

/** Time limit of one request on a worker: its parse and its transaction (a killed worker's transaction rolls back). */
export const TRAJECTORY_LOG_TIME_MS = 60_000;

export interface LogContext {
  res: ServerResponse;
  body: Buffer;
  modelId: string;
  models: readonly ServedModel[];
  parse: BodyParseOptions;
  /**
   * Where the request is written: the data directory of the server's own database (by a worker), or
   * the database to write on the event loop; a string says why the store cannot be opened (503).
   */
  store: () => { dataDir: string; usage: UsageRecorder } | { db: Database } | string;
  headers: Record<string, string>;
}

function unavailable(why: string): HttpError {
  return new HttpError(503, `The trajectory store is unavailable: ${why}`, null, { 'Retry-After': '5' });
}

/** SQLite could not write (disk full, read-only file system, locked, I/O error): nothing was committed, the client may retry. */
function writeFailed(code: string, message: string): HttpError {
  return new HttpError(503, `The trajectory store cannot write right now (${code}): ${message}`, null, { 'Retry-After': '5' });
}

/**
 * Answers the request. Rejects with the HttpErrors above, or with the signal's reason when the client
 * left while its work waited for a worker.
 */
export async function handleTrajectoryLog(ctx: LogContext): Promise<void> {
  const served = ctx.models.some((m) => m.id === ctx.modelId);
  const notFound = (): HttpError => new HttpError(404, `The model \`${ctx.modelId}\` does not exist.`, 'model_id');
  const store = ctx.store();
  let logged: LoggedTrajectories;
  if (typeof store === 'object' && 'dataDir' in store) {
    const outcome = await store.usage.writesElsewhere(runOnWorker(ctx, store.dataDir, served));
    if (outcome.kind === 'invalid') return sendValidation(ctx.res, outcome.detail);
    if (outcome.kind === 'not-found') throw notFound();
    logged = outcome.logged;
  } else {
    const parsed = await parseBody('trajectory-log', ctx.body, ctx.parse);
    if (!parsed.ok) return sendValidation(ctx.res, parsed.detail);
    if (!served) throw notFound();
    if (typeof store === 'string') throw unavailable(store);
    try {
      logged = logTrajectories(store.db, ctx.modelId, parsed.value);
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (typeof code === 'string' && code.startsWith('SQLITE_')) throw writeFailed(code, (error as Error).message);
      throw error;
    }
  }
  sendJson(ctx.res, 200, { object: 'trajectory_log', model: ctx.modelId, ...logged }, ctx.headers);
}

async function runOnWorker(ctx: LogContext, dataDir: string, modelServed: boolean): Promise<TrajectoryLogOutcome> {
  // The bytes are transferred when the body owns its buffer (readBody's does), else copied.
  const own = ctx.body.byteOffset === 0 && ctx.body.byteLength === ctx.body.buffer.byteLength;
  const bytes = own ? ctx.body : new Uint8Array(ctx.body);
  const payload: TrajectoryLogPayload = { body: bytes, dataDir, model: ctx.modelId, modelServed };
  const release = await logGate().acquire(ctx.parse.client, ctx.parse.signal);
  try {
    return (await workPool().run('trajectory-log', payload, { client: ctx.parse.client, timeMs: TRAJECTORY_LOG_TIME_MS, signal: ctx.parse.signal, transfer: [bytes.buffer as ArrayBuffer] })) as TrajectoryLogOutcome;
  } catch (error) {
    if (error instanceof WorkLimitError) throw new HttpError(413, `Request body is too complex to store: it ${error.message}.`, null, { Connection: 'close' });
    const code = error instanceof WorkTaskError ? error.fields.code : undefined;
    if (typeof code === 'string' && code.startsWith('SQLITE_')) throw writeFailed(code, (error as Error).message);
    throw error;
  } finally {
    release();
  }
}
