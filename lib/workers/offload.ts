// NOTE(workers/offload): the process's shared gates for request-controlled work — one work pool
// (template renders, structured-output conversion) and one gate for native tokenize jobs on libuv's
// threads — and the options such work carries: the client it is for (fairness) and the request's abort
// signal: work still waiting in a gate when its request is aborted (the client disconnected) is dropped
// from the line; work already running ends at its own limits. Every engine of the process shares the
// gates: the limit is on the machine's threads.
import os from 'node:os';
import { FairGate } from './fair-gate.js';
import { WorkPool } from './work-pool.js';
import type { WorkPoolOptions } from './work-pool.js';

export interface WorkOptions {
  /** Who the work is for: an API key, a remote address … ('' when the caller names no one). */
  client?: string;
  /** The request's signal: aborting it drops the work if it has not started yet. */
  signal?: AbortSignal;
}

/** Chat-template render time limit (ms), enforced by terminating the worker. */
export const RENDER_TIME_MS = 2000;
/** JSON-schema/regex → grammar conversion time limit (ms), enforced the same way. */
export const CONVERSION_TIME_MS = 2000;

function defaultPoolOptions(): WorkPoolOptions {
  // Two workers at least, so one client's renders (perClient = half) never hold all of them.
  const size = Math.min(4, Math.max(2, os.availableParallelism()));
  return {
    size,
    perClient: Math.max(1, Math.floor(size / 2)),
    waitingPerClient: 32,
    waitingTotal: 256,
    memoryMb: 256,
    retryAfterSeconds: Math.ceil(Math.max(RENDER_TIME_MS, CONVERSION_TIME_MS) / 1000),
  };
}

let pool: WorkPool | null = null;
let tokenize: FairGate | null = null;

export function workPool(): WorkPool {
  pool ??= new WorkPool(defaultPoolOptions(), 'chat-template and structured-output work');
  return pool;
}

/**
 * Replaces the process's work pool (size, per-client share, heap limit …); the old one's idle workers
 * are terminated and its running tasks finish. For embedders that size their own machine.
 */
export function configureWorkPool(options: Partial<WorkPoolOptions>): void {
  const old = pool;
  pool = new WorkPool({ ...defaultPoolOptions(), ...options }, 'chat-template and structured-output work');
  void old?.close();
}

/**
 * Long tokenizations run on libuv's thread pool (4 threads by default, shared with grammar compiles and
 * file I/O): two at a time, one per client.
 */
export function tokenizeGate(): FairGate {
  tokenize ??= new FairGate({ slots: 2, perClient: 1, waitingPerClient: 32, waitingTotal: 256, retryAfterSeconds: 1 }, 'tokenization');
  return tokenize;
}
