// NOTE(workers/work-pool): worker threads for work whose cost a request controls (chat-template renders,
// JSON-schema/regex → grammar conversion), so the event loop that writes every stream never runs it.
// Limits are hard, not cooperative: a task still running at its time limit has its worker terminated
// (worker.terminate() stops the thread's JavaScript wherever it is), and each worker's heap is capped
// by resourceLimits, so a task that allocates past it kills only its worker (ERR_WORKER_OUT_OF_MEMORY).
// A killed worker is replaced by a fresh one on the next task. Admission goes through a FairGate with
// one slot per worker, so a client holds at most `perClient` workers. Workers start lazily, are
// unref'd while idle (an embedding process may exit), and do their first task once they signalled
// ready, so start-up time never counts against a task's limit.
import { Worker } from 'node:worker_threads';
import { FairGate } from './fair-gate.js';
import type { GateStats } from './fair-gate.js';
import { workerScript } from './worker-script.js';
import type { WorkerReply, WorkerRequest } from './work-protocol.js';

export interface WorkPoolOptions {
  /** Worker threads (and work items running at once). */
  size: number;
  /** Workers one client may occupy at once. */
  perClient: number;
  /** Work items one client may have waiting (then 429). */
  waitingPerClient: number;
  /** Work items all clients may have waiting (then 503). */
  waitingTotal: number;
  /** Heap (old generation) of each worker, MiB. */
  memoryMb: number;
  /** Retry-After of a refusal, seconds (the usual time limit of a task). */
  retryAfterSeconds: number;
}

export interface RunOptions {
  /** Who the work is for (fairness between clients). */
  client: string;
  /** Hard limit from the moment a ready worker starts the task. */
  timeMs: number;
  /** Aborting it while the task still waits for a worker drops the task (a started one runs to its end or limit). */
  signal?: AbortSignal;
  /** Buffers of the payload handed to the worker rather than copied (unusable here afterwards). */
  transfer?: ArrayBuffer[];
}

/** The pool stopped a task at a limit and terminated its worker. */
export class WorkLimitError extends Error {
  constructor(readonly limit: 'time' | 'memory', message: string) {
    super(message);
    this.name = 'WorkLimitError';
  }
}

/** A task threw inside its worker: `fields` are the error's own enumerable data (code, status, line …). */
export class WorkTaskError extends Error {
  constructor(message: string, readonly errorName: string, readonly fields: Record<string, unknown>) {
    super(message);
    this.name = 'WorkTaskError';
  }
}

export interface WorkPoolStats extends GateStats {
  workers: number;
  /** Workers terminated at a limit since the pool was made. */
  terminatedTime: number;
  terminatedMemory: number;
}

type WorkerEvent = { type: 'message'; reply: WorkerReply } | { type: 'error'; error: Error & { code?: string } } | { type: 'exit'; code: number };

class PooledWorker {
  readonly worker: Worker;
  readonly ready: Promise<void>;
  /** The running task's listener (one task at a time). */
  listener: ((event: WorkerEvent) => void) | null = null;

  constructor(memoryMb: number) {
    const script = workerScript();
    this.worker = new Worker(script.filename, {
      workerData: script.workerData,
      resourceLimits: { maxOldGenerationSizeMb: memoryMb, maxYoungGenerationSizeMb: Math.min(32, memoryMb / 4), stackSizeMb: 4 },
    });
    this.worker.unref();
    let started: () => void;
    let failed: (e: Error) => void;
    this.ready = new Promise<void>((resolve, reject) => { started = resolve; failed = reject; });
    this.ready.catch(() => undefined); // an unused spare that fails to start is not an unhandled rejection
    this.worker.on('message', (m: WorkerReply | 'ready') => {
      if (m === 'ready') started();
      else this.listener?.({ type: 'message', reply: m });
    });
    this.worker.on('error', (error: Error) => {
      failed(error);
      this.listener?.({ type: 'error', error });
    });
    this.worker.on('exit', (code) => {
      failed(new Error(`work-pool worker exited with code ${code} before it was ready`));
      this.listener?.({ type: 'exit', code });
    });
  }
}

export class WorkPool {
  readonly gate: FairGate;
  readonly #idle: PooledWorker[] = [];
  #workers = 0;
  #nextId = 1;
  #terminatedTime = 0;
  #terminatedMemory = 0;

  constructor(private readonly options: WorkPoolOptions, what: string) {
    this.gate = new FairGate({
      slots: options.size,
      perClient: Math.min(options.perClient, options.size),
      waitingPerClient: options.waitingPerClient,
      waitingTotal: options.waitingTotal,
      retryAfterSeconds: options.retryAfterSeconds,
    }, what);
  }

  /**
   * Runs `kind` with `payload` on a worker. Rejects with OverloadedError (refused), WorkLimitError
   * (time/memory, the worker was terminated), WorkTaskError (the task threw) or the signal's reason
   * (aborted before a worker took it).
   */
  async run(kind: string, payload: unknown, opts: RunOptions): Promise<unknown> {
    const release = await this.gate.acquire(opts.client, opts.signal);
    try {
      const w = this.#idle.pop() ?? this.#spawn();
      await w.ready;
      return await this.#runOn(w, { id: this.#nextId++, kind, payload }, opts);
    } finally {
      release();
    }
  }

  stats(): WorkPoolStats {
    return { ...this.gate.stats(), workers: this.#workers, terminatedTime: this.#terminatedTime, terminatedMemory: this.#terminatedMemory };
  }

  /** Terminates every idle worker (running ones end with their task). */
  async close(): Promise<void> {
    const idle = this.#idle.splice(0);
    this.#workers -= idle.length;
    await Promise.all(idle.map((w) => w.worker.terminate()));
  }

  #spawn(): PooledWorker {
    this.#workers += 1;
    const w = new PooledWorker(this.options.memoryMb);
    w.worker.once('exit', () => {
      this.#workers -= 1;
      const at = this.#idle.indexOf(w);
      if (at >= 0) this.#idle.splice(at, 1);
    });
    return w;
  }

  #runOn(w: PooledWorker, request: WorkerRequest, opts: RunOptions): Promise<unknown> {
    return new Promise<unknown>((resolve, reject) => {
      let done = false;
      const finish = (keep: boolean, settle: () => void): void => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        w.listener = null;
        w.worker.unref();
        if (keep) this.#idle.push(w);
        else void w.worker.terminate();
        settle();
      };
      const timer = setTimeout(() => {
        this.#terminatedTime += 1;
        finish(false, () => reject(new WorkLimitError('time', `exceeded the time limit of ${opts.timeMs} ms`)));
      }, opts.timeMs);
      w.listener = (event) => {
        if (event.type === 'message') {
          if (event.reply.id !== request.id) return;
          const r = event.reply;
          finish(true, () => (r.ok ? resolve(r.value) : reject(new WorkTaskError(r.error.message, r.error.name, r.error.fields))));
        } else if (event.type === 'error' && event.error.code === 'ERR_WORKER_OUT_OF_MEMORY') {
          this.#terminatedMemory += 1;
          finish(false, () => reject(new WorkLimitError('memory', `exceeded the memory limit of ${this.options.memoryMb} MiB`)));
        } else {
          const why = event.type === 'error' ? event.error : new Error(`work-pool worker exited with code ${event.code}`);
          finish(false, () => reject(why));
        }
      };
      w.worker.ref();
      w.worker.postMessage(request, opts.transfer ?? []);
    });
  }
}
