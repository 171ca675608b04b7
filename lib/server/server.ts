// NOTE(server/server): the HTTP adapter on node:http (docs/http-api.md#endpoints). Every request gets an
// X-Request-Id (echoed when the client sent one). Pipeline: route (404/405) → auth for /v1 (401) → readiness
// and draining (503) → content type (415) → body with a byte limit (413) → JSON and schema (422; large
// bodies on a worker, body-parse.ts) → route handler. Draining stops accepting, lets running requests finish up to a timeout, then aborts them
// (each ends with finish_reason 'abort': a stream still gets its final chunks and [DONE]), destroys the
// sockets of whatever has not ended a few seconds later, and flushes usage before closing the
// database once every request's handler settled (it has counted its usage then). Each wait is for the
// requests in flight to end (in-flight.ts), never a poll or a fixed sleep.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { openDatabase, SERVER_BUSY_TIMEOUT_MS, type Database } from '../store/database.js';
import { UsageRecorder } from '../store/usage.js';
import { OverloadedError } from '../engine/errors.js';
import { tokenizeGate, workPool } from '../workers/offload.js';
import { KeyChecker, parseProject } from './auth.js';
import { parseBody } from './body-parse.js';
import { openApiDocument } from './openapi.js';
import { RateLimiter } from './rate-limit.js';
import { errorResponse, handleChat } from './chat-route.js';
import { HttpError, isJsonContentType, readBody, sendError, sendJson, sendValidation } from './http-io.js';
import { InFlight } from './in-flight.js';
import { handleTrajectoryLog } from './log-route.js';
import { ModelMetrics, renderMetrics } from './metrics.js';
import { uncaughtCounts } from './last-resort.js';
import { EventLoopDelay, renderProcessMetrics } from './process-metrics.js';
import type { LogLevel, ServedModel, ServerOptions, UsageReport } from './types.js';

export interface TokenmillServer extends http.Server {
  /** Resolves when every model is loaded (rejects when loading failed). */
  readonly ready: Promise<void>;
  /** Stops accepting, waits for running requests up to `timeoutMs`, aborts the rest, closes the store. */
  drain(timeoutMs?: number): Promise<void>;
  /** The sink for engines' onUsage hooks (with engineReportsUsage): counts one finished request. */
  recordUsage(report: UsageReport): void;
}

const LEVELS: Record<LogLevel, number> = { debug: 10, info: 20, warning: 30, error: 40 };
const DEFAULT_MAX_REQUEST_BYTES = 8 * 1024 * 1024;
/**
 * How long aborted requests get to write their last chunks when the drain timeout ran out, and then how
 * long the handlers of the requests whose sockets were destroyed get to count their usage.
 */
const ABORT_GRACE_MS = 3_000;
const DEFAULT_DATA_DIR = './tokenmill-data';

type Route = { methods: string[]; handler: 'chat' | 'models' | 'log' | 'health' | 'metrics' | 'openapi'; modelId?: string };
/** Routes that need no key (load balancers, Prometheus, API tooling). */
const OPEN_ROUTES: ReadonlySet<Route['handler']> = new Set(['health', 'metrics', 'openapi']);

function route(pathname: string): Route | null {
  const p = pathname.length > 1 && pathname.endsWith('/') ? pathname.slice(0, -1) : pathname;
  if (p === '/v1/chat/completions') return { methods: ['POST'], handler: 'chat' };
  if (p === '/v1/models') return { methods: ['GET'], handler: 'models' };
  if (p === '/health') return { methods: ['GET'], handler: 'health' };
  if (p === '/metrics') return { methods: ['GET'], handler: 'metrics' };
  if (p === '/openapi.json') return { methods: ['GET'], handler: 'openapi' };
  const m = /^\/v1\/preview\/models\/([^/]+)\/log$/.exec(p);
  if (m) {
    let modelId: string;
    try {
      modelId = decodeURIComponent(m[1]!);
    } catch {
      return null;
    }
    return { methods: ['POST'], handler: 'log', modelId };
  }
  return null;
}

/** docs/library.md#createserver: an http.Server (not yet listening) serving `options.models`. */
export function createServer(options: ServerOptions): TokenmillServer {
  const level = LEVELS[options.logLevel ?? 'info'];
  const log = (lv: LogLevel, message: string): void => {
    if (LEVELS[lv] < level) return;
    if (options.log) options.log(lv, message);
    else process.stderr.write(`tokenmill ${lv}: ${message}\n`);
  };
  const keys = new KeyChecker(options.apiKeys ?? []);
  const limiter = new RateLimiter({ requestsPerMinute: options.rateLimitRequests, tokensPerMinute: options.rateLimitTokens });
  const maxBytes = options.maxRequestBytes ?? DEFAULT_MAX_REQUEST_BYTES;
  let models: readonly ServedModel[] | null = Array.isArray(options.models) ? (options.models as readonly ServedModel[]) : null;
  let draining = false;
  const metrics = new Map<string, ModelMetrics>();
  const metricsOf = (id: string): ModelMetrics => {
    let m = metrics.get(id);
    if (!m) metrics.set(id, (m = new ModelMetrics()));
    return m;
  };
  const ownsDb = options.database === undefined;
  let db: Database | null = null;
  let usage: UsageRecorder | null = null;
  let storeError: string | null = null;
  // A database that cannot be opened (read-only or missing data dir, disk full, locked) leaves inference
  // running: usage is not recorded and the trajectory log answers 503 until an open succeeds.
  const store = (): { db: Database; usage: UsageRecorder } | null => {
    if (!db) {
      try {
        db = options.database ?? openDatabase(options.dataDir ?? DEFAULT_DATA_DIR);
        // Requests run on the event loop: waiting for another process's lock blocks every request.
        if (ownsDb) db.pragma(`busy_timeout = ${SERVER_BUSY_TIMEOUT_MS}`);
        usage = new UsageRecorder(db, options.usageFlushMs ?? 1000, (e) => log('warning', `usage could not be written yet, retrying: ${String((e as Error)?.message ?? e)}`));
        storeError = null;
      } catch (error) {
        const message = String((error as Error)?.message ?? error);
        if (message !== storeError) log('error', `the database cannot be opened (${message}); inference goes on, usage is not recorded and the trajectory log answers 503`);
        storeError = message;
        return null;
      }
    }
    return { db, usage: usage! };
  };
  store();
  const active = new Set<ServerResponse>();
  const inFlight = new InFlight();
  let openapi: string | null = null;
  // Aborted when the drain timeout runs out: running chat requests end with finish_reason 'abort'.
  const stopping = new AbortController();
  const loopDelay = new EventLoopDelay();

  const ready = Promise.resolve(options.models).then((list) => {
    if (list.length === 0) throw new Error('createServer: at least one model is needed');
    const ids = new Set<string>();
    for (const m of list) {
      if (ids.has(m.id)) throw new Error(`createServer: model id '${m.id}' is served twice`);
      ids.add(m.id);
      metricsOf(m.id);
    }
    models = list;
  });
  ready.catch(() => undefined);

  const handle = async (req: IncomingMessage, res: ServerResponse, requestId: string): Promise<void> => {
    const headers = { 'X-Request-Id': requestId };
    const url = new URL(req.url ?? '/', 'http://localhost');
    const r = route(url.pathname);
    if (!r) {
      if (url.pathname.startsWith('/v1') && !keys.check(req.headers.authorization)) throw new HttpError(401, 'Invalid or missing API key');
      throw new HttpError(404, `Not found: ${req.method} ${url.pathname}`);
    }
    const caller = keys.identify(req.headers.authorization);
    if (!OPEN_ROUTES.has(r.handler) && caller === null) {
      throw new HttpError(401, 'Invalid or missing API key');
    }
    if (!r.methods.includes(req.method ?? '')) {
      throw new HttpError(405, `Method ${req.method} not allowed on ${url.pathname}; use ${r.methods.join(', ')}.`, null, { Allow: r.methods.join(', ') });
    }
    if (r.handler === 'health') {
      if (!models || draining) sendJson(res, 503, { status: draining ? 'draining' : 'loading' });
      else sendJson(res, 200, { status: 'ok' });
      return;
    }
    if (r.handler === 'openapi') {
      openapi ??= JSON.stringify(openApiDocument());
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(openapi) });
      res.end(openapi);
      return;
    }
    if (r.handler === 'metrics') {
      const text = renderMetrics((models ?? []).map((m) => ({
        id: m.id,
        metrics: metricsOf(m.id),
        blockSize: options.blockSize ?? 16,
        stats: () => {
          try {
            return m.engine.stats();
          } catch {
            return null;
          }
        },
      }))) + renderProcessMetrics({ loop: loopDelay, workPool: workPool().stats(), tokenize: tokenizeGate().stats(), uncaught: uncaughtCounts() });
      res.writeHead(200, { 'Content-Type': 'text/plain; version=0.0.4; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
      res.end(text);
      return;
    }
    if (draining) throw new HttpError(503, 'The server is shutting down.');
    if (!models) throw new HttpError(503, 'The model is still loading.');
    const served = models;
    if (r.handler === 'models') {
      const created = Math.floor(Date.now() / 1000);
      sendJson(res, 200, {
        object: 'list',
        data: served.map((m) => ({ id: m.id, object: 'model', created, owned_by: 'tokenmill', root: m.root ?? m.engine.model?.info?.path ?? m.id, max_model_len: m.engine.maxModelLen })),
      }, headers);
      return;
    }
    if (limiter.enabled && caller !== null) {
      const refused = limiter.admit(caller);
      if (refused) {
        const flag = refused.limit === 'requests' ? '--rate-limit-requests' : '--rate-limit-tokens';
        throw new HttpError(429, `Rate limit reached for this API key: ${refused.perMinute} ${refused.limit} per minute (${flag}). Try again in ${refused.retryAfterSeconds} s.`, null, { 'Retry-After': String(refused.retryAfterSeconds) });
      }
    }
    const project = parseProject(req.headers['openai-project']);
    if (!project) throw new HttpError(400, 'Invalid OpenAI-Project header: expected <team>/<project> (non-empty parts, at most 128 characters, no control characters).', 'OpenAI-Project');
    if (!isJsonContentType(req.headers['content-type'])) {
      throw new HttpError(415, `Unsupported Media Type: Only 'application/json' is allowed`);
    }
    const body = await readBody(req, maxBytes);
    // Fair shares of the workers (large bodies, templates, schemas) go by API key, on an open server by
    // remote address.
    const client = caller === null || caller === 'open' ? `addr:${req.socket.remoteAddress ?? 'unknown'}` : caller;
    const gone = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) gone.abort();
    });
    // Token-id fields longer than every served vocabulary are refused whatever the model: the parse
    // worker leaves them out rather than copy them back (lib/openai/chat-input.ts).
    const maxIds = Math.max(...served.map((m) => m.engine.model?.info?.vocabSize ?? Number.POSITIVE_INFINITY));
    const parseOptions = { maxLogprobs: options.maxLogprobs ?? 20, client, signal: gone.signal, maxIds };
    // A client that left while its large body waited for a worker needs no answer (null).
    const unlessGone = <T>(parsing: Promise<T>): Promise<T | null> => parsing.catch((error: unknown) => {
      if (gone.signal.aborted && error === gone.signal.reason) return null;
      throw error;
    });
    if (r.handler === 'chat') {
      const parsed = await unlessGone(parseBody('chat', body, parseOptions));
      if (parsed === null) return;
      if (!parsed.ok) {
        sendValidation(res, parsed.detail);
        return;
      }
      await handleChat({
        res, input: parsed.value, project, client, headers, models: served, metricsOf, usage: store()?.usage ?? null, options,
        onError: (e) => log('error', `request ${requestId}: ${String((e as Error)?.stack ?? e)}`),
        onTokens: (n) => limiter.charge(caller!, n),
        stop: stopping.signal,
      });
      return;
    }
    // The server's own database is written by a worker's connection (log-route.ts).
    const logStore = (): { dataDir: string; usage: UsageRecorder } | { db: Database } | string => {
      const opened = store();
      if (!opened) return storeError ?? 'unknown error';
      return ownsDb ? { dataDir: options.dataDir ?? DEFAULT_DATA_DIR, usage: opened.usage } : { db: opened.db };
    };
    await unlessGone(handleTrajectoryLog({ res, body, modelId: r.modelId!, models: served, parse: parseOptions, store: logStore, headers }));
  };

  const requestTimeout = options.requestTimeoutMs ?? 300_000;
  // Node checks request timeouts on this interval (30 s by default): a slow-loris client of a short
  // timeout would otherwise hold its socket up to 30 s past it.
  const connectionsCheckingInterval = Math.min(30_000, Math.max(100, Math.floor(requestTimeout / 4)));
  const server = http.createServer({ requestTimeout, connectionsCheckingInterval, keepAliveTimeout: options.keepAliveTimeoutMs ?? 5_000 }, (req, res) => {
    const incoming = req.headers['x-request-id'];
    const requestId = typeof incoming === 'string' && incoming.length > 0 && incoming.length <= 256 ? incoming : randomUUID();
    res.setHeader('X-Request-Id', requestId);
    active.add(res);
    const ended = new Promise<void>((resolve) => res.once('close', () => {
      active.delete(res);
      resolve();
    }));
    const handled = handle(req, res, requestId).catch((error: unknown) => {
      const [status, body] = errorResponse(error);
      if (status >= 500) log('error', `request ${requestId}: ${String((error as Error)?.stack ?? error)}`);
      if (res.headersSent) {
        res.end();
        return;
      }
      const extra = error instanceof HttpError ? error.headers
        : error instanceof OverloadedError ? { 'Retry-After': String(error.retryAfterSeconds) } : {};
      if (status === 422 && (body as { detail?: unknown }).detail) sendJson(res, 422, body, extra);
      else sendJson(res, status, body, extra);
      if (extra.Connection === 'close') res.once('finish', () => req.socket.destroy());
    });
    inFlight.track([handled, ended]);
  }) as TokenmillServer;
  server.headersTimeout = Math.min(60_000, options.requestTimeoutMs ?? 60_000);

  let drained: Promise<void> | null = null;
  const closeStore = (): void => {
    try {
      usage?.close();
    } catch (error) {
      log('error', `the last usage could not be written: ${String((error as Error)?.message ?? error)}`);
    }
    usage = null;
    if (db && ownsDb) db.close();
    db = null;
  };
  Object.defineProperty(server, 'ready', { value: ready });
  Object.defineProperty(server, 'drain', {
    value: (timeoutMs = 30_000): Promise<void> => {
      if (drained) return drained;
      draining = true;
      drained = (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        if (!(await inFlight.idle(timeoutMs))) {
          // Out of time: abort what still runs, so each stream gets its final chunks and [DONE] (and each
          // request its usage); only what does not end within a few more seconds is cut off.
          stopping.abort();
          await inFlight.idle(ABORT_GRACE_MS);
        }
        for (const res of active) res.destroy();
        server.closeAllConnections();
        await closed;
        // A handler whose socket was destroyed (here or by its client) ends its engine request and counts
        // its usage after its response closed: the final flush waits for that.
        await inFlight.idle(ABORT_GRACE_MS);
        closeStore();
      })();
      return drained;
    },
  });
  Object.defineProperty(server, 'recordUsage', {
    value: (report: UsageReport): void => {
      const project = parseProject(report.project ?? undefined) ?? { team: 'default', project: 'default' };
      // After the store closed (late report of a request aborted by the drain) there is nowhere to write.
      usage?.record({ ...project, model: report.model, promptTokens: report.promptTokens, cachedTokens: report.cachedTokens, completionTokens: report.completionTokens });
    },
  });
  server.once('close', () => {
    loopDelay.close();
    if (!drained) closeStore();
  });
  return server;
}

export { sendError };
