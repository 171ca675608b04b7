// NOTE(server/http-io): every response of the server goes through these helpers, so each carries the
// request id and a JSON or SSE content type, and every error uses one of the two shapes of
// docs/http-api.md#errors: the envelope {"error":{message,type,param,code}} or the 422 {"detail":[…]}. Bodies
// are read with a hard byte limit: reading stops (and the socket stops being drained) as soon as the limit is
// crossed.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ValidationDetail } from '../openai/protocol.js';

export const ERROR_TYPES: Record<number, string> = {
  400: 'BadRequestError',
  401: 'AuthenticationError',
  404: 'NotFoundError',
  405: 'MethodNotAllowedError',
  413: 'RequestEntityTooLargeError',
  415: 'UnsupportedMediaTypeError',
  429: 'RateLimitError',
  500: 'InternalServerError',
  501: 'NotImplementedError',
  503: 'ServiceUnavailableError',
};

/** An error the server answers with its envelope (status, message, param). */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly param: string | null = null,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export function errorEnvelope(status: number, message: string, param: string | null = null): { error: { message: string; type: string; param: string | null; code: number } } {
  return { error: { message, type: ERROR_TYPES[status] ?? (status >= 500 ? 'InternalServerError' : 'BadRequestError'), param, code: status } };
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

export function sendError(res: ServerResponse, status: number, message: string, param: string | null = null, headers: Record<string, string> = {}): void {
  sendJson(res, status, errorEnvelope(status, message, param), headers);
}

export function sendValidation(res: ServerResponse, detail: ValidationDetail[]): void {
  sendJson(res, 422, { detail });
}

/** Media type (before any `;`) is application/json, case-insensitively. */
export function isJsonContentType(header: string | undefined): boolean {
  if (!header) return false;
  return header.split(';')[0]!.trim().toLowerCase() === 'application/json';
}

/** Bytes of a body received before it gets a buffer of its declared length (readBody). */
export const PREALLOCATE_AFTER_BYTES = 1024 * 1024;

/**
 * Reads the whole body (its bytes: a large one is decoded on a worker), or rejects with a 413 HttpError
 * once more than `limit` bytes came in (a Content-Length over the limit is refused before reading anything).
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    const tooLarge = (): HttpError => new HttpError(413, `Request body is larger than the limit of ${limit} bytes.`, null, { Connection: 'close' });
    if (Number.isFinite(declared) && declared > limit) {
      req.pause();
      reject(tooLarge());
      return;
    }
    // Chunks are kept as they come. Past PREALLOCATE_AFTER_BYTES received, a body that declared its
    // length gets one buffer of that length, the rest copied in as it arrives: joining 8 MiB of 64 KiB
    // chunks at the end was 20 ms on the event loop (and 100 ms under load), while a buffer sized by
    // Content-Length from the first byte would let idle connections claim 8 MiB each. A buffer of its
    // own is transferred to the parse worker without another copy.
    const chunks: Buffer[] = [];
    let whole: Buffer | null = null;
    let size = 0;
    let done = false;
    const onData = (chunk: Buffer): void => {
      if (done) return;
      if (size + chunk.length > limit) {
        done = true;
        req.off('data', onData);
        req.pause();
        reject(tooLarge());
        return;
      }
      if (!whole && size + chunk.length > PREALLOCATE_AFTER_BYTES && Number.isFinite(declared) && declared >= size + chunk.length) {
        whole = Buffer.allocUnsafeSlow(declared);
        let at = 0;
        for (const c of chunks.splice(0)) at += c.copy(whole, at);
      }
      if (whole) chunk.copy(whole, size);
      else chunks.push(chunk);
      size += chunk.length;
    };
    req.on('data', onData);
    req.once('end', () => {
      if (done) return;
      done = true;
      resolve(whole ? whole.subarray(0, size) : Buffer.concat(chunks, size));
    });
    req.once('error', (error) => {
      if (done) return;
      done = true;
      reject(error);
    });
  });
}

/** Starts an SSE response. */
export function startSse(res: ServerResponse, headers: Record<string, string> = {}): void {
  res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache', Connection: 'keep-alive', ...headers });
  res.flushHeaders();
}

/** Writes one `data:` event; resolves when the socket can take more (backpressure). */
export function writeSse(res: ServerResponse, payload: unknown): Promise<void> | void {
  const ok = res.write(`data: ${typeof payload === 'string' ? payload : JSON.stringify(payload)}\n\n`);
  if (ok || res.destroyed) return;
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.once('drain', done);
    res.once('close', done);
  });
}
