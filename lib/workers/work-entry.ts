// NOTE(workers/work-entry): the main module of a work-pool worker thread. It lowers its own scheduling
// priority, so on a busy machine the event loop and the engine threads win the CPU over a render that
// a request made expensive; then it answers requests one at a time with the handler of their kind.
import { readlinkSync } from 'node:fs';
import os from 'node:os';
import { parentPort } from 'node:worker_threads';
import { WORK_HANDLERS } from './work-handlers.js';
import { serializeError, Transferring } from './work-protocol.js';
import type { WorkerReply, WorkerRequest } from './work-protocol.js';

/** nice value of work threads (the event loop's thread keeps the process's). */
const WORKER_NICE = 10;

// Linux applies setpriority(PRIO_PROCESS, tid) to that one thread, and /proc/thread-self names this
// thread's tid. Elsewhere there is no per-thread priority to lower and the worker runs at the
// process's priority: the limits still hold, only the CPU share under contention differs.
function lowerThreadPriority(): void {
  let tid: number;
  try {
    tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
  } catch {
    return;
  }
  if (Number.isInteger(tid) && tid > 0) os.setPriority(tid, WORKER_NICE);
}

const port = parentPort;
if (!port) throw new Error('work-entry runs only as a worker thread of the work pool');
lowerThreadPriority();
port.on('message', (request: WorkerRequest) => {
  let reply: WorkerReply;
  let transfer: ArrayBuffer[] = [];
  try {
    const handler = WORK_HANDLERS[request.kind];
    if (!handler) throw new Error(`work pool: unknown task kind '${request.kind}'`);
    const out = handler(request.payload);
    if (out instanceof Transferring) transfer = out.transfer;
    reply = { id: request.id, ok: true, value: out instanceof Transferring ? out.value : out };
  } catch (error) {
    reply = { id: request.id, ok: false, error: serializeError(error) };
  }
  port.postMessage(reply, transfer);
});
port.postMessage('ready');
