// NOTE(workers/work-protocol): the messages between the work pool and its worker threads. A worker posts
// 'ready' once its modules are loaded, then answers each request with a reply of the same id; buffers
// a handler marks (Transferring) are transferred, not copied. An error
// crosses as its name, message and own enumerable fields (code, status, param, line …), because
// structured clone keeps neither the class nor those fields.

export interface WorkerRequest {
  id: number;
  kind: string;
  payload: unknown;
}

export interface SerializedError {
  name: string;
  message: string;
  fields: Record<string, unknown>;
}

export type WorkerReply = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: SerializedError };

/**
 * A task's value together with buffers inside it that cross by transfer, not by copy: a handler
 * returns one for a large result (a packed conversation), so the event loop receives it without copying.
 */
export class Transferring {
  constructor(readonly value: unknown, readonly transfer: ArrayBuffer[]) {}
}

export function serializeError(error: unknown): SerializedError {
  if (!(error instanceof Error)) return { name: 'Error', message: String(error), fields: {} };
  const fields: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(error)) {
    if (v === null || ['string', 'number', 'boolean'].includes(typeof v)) fields[k] = v;
  }
  return { name: error.name, message: error.message, fields };
}
