// NOTE(store/usage): request handlers only add to an in-memory map keyed by (day, team, project,
// model); a timer flushes it in one transaction off the request path. `close()` flushes what is left,
// so a graceful shutdown loses nothing. A failed flush keeps the rows for the next attempt. The timed
// flush runs on the event loop, so it never waits for a lock: a database another connection is writing
// (a work-pool worker's trajectory log, another process) fails it at once, and the next tick retries.
// Waiting there held every stream of the server: with the connection's 250 ms busy timeout, a flush
// during a 60k-trajectory log stalled the event loop for 250-350 ms (measured, docs/storage.md#usage).
import type { Database } from './database.js';

export interface UsageDelta {
  team: string;
  project: string;
  model: string;
  promptTokens: number;
  cachedTokens: number;
  completionTokens: number;
}

export interface UsageRow {
  day: string;
  team: string;
  project: string;
  model: string;
  requests: number;
  prompt_tokens: number;
  cached_tokens: number;
  completion_tokens: number;
}

/** UTC day YYYY-MM-DD of `at`. */
export function utcDay(at: Date = new Date()): string {
  return at.toISOString().slice(0, 10);
}

export class UsageRecorder {
  #db: Database;
  #pending = new Map<string, UsageRow>();
  #timer: NodeJS.Timeout | null;
  /** This process's writes on other connections in flight: a timed flush they lock out is expected, not reported. */
  #writesElsewhere = 0;
  #upsert;

  /**
   * `onError` hears about a timed flush that failed (database locked, disk full); its rows stay pending
   * for the next one. A flush locked out by a write announced with writesElsewhere is not reported.
   * An error thrown from the timer would end the process.
   */
  constructor(db: Database, flushIntervalMs = 1000, onError: (error: unknown) => void = () => undefined) {
    this.#db = db;
    this.#upsert = db.prepare(`INSERT INTO usage (day, team, project, model, requests, prompt_tokens, cached_tokens, completion_tokens)
      VALUES (@day, @team, @project, @model, @requests, @prompt_tokens, @cached_tokens, @completion_tokens)
      ON CONFLICT (day, team, project, model) DO UPDATE SET
        requests = requests + excluded.requests, prompt_tokens = prompt_tokens + excluded.prompt_tokens,
        cached_tokens = cached_tokens + excluded.cached_tokens, completion_tokens = completion_tokens + excluded.completion_tokens`);
    this.#timer = setInterval(() => {
      try {
        this.flush({ waitForLocks: false });
      } catch (error) {
        const code = (error as { code?: unknown }).code;
        const locked = typeof code === 'string' && code.startsWith('SQLITE_BUSY');
        if (!(locked && this.#writesElsewhere > 0)) onError(error);
      }
    }, flushIntervalMs);
    this.#timer.unref();
  }

  /** Counts one request; cheap (no I/O). */
  record(delta: UsageDelta, at: Date = new Date()): void {
    const day = utcDay(at);
    const key = JSON.stringify([day, delta.team, delta.project, delta.model]);
    let row = this.#pending.get(key);
    if (!row) {
      row = { day, team: delta.team, project: delta.project, model: delta.model, requests: 0, prompt_tokens: 0, cached_tokens: 0, completion_tokens: 0 };
      this.#pending.set(key, row);
    }
    row.requests += 1;
    row.prompt_tokens += delta.promptTokens;
    row.cached_tokens += delta.cachedTokens;
    row.completion_tokens += delta.completionTokens;
  }

  /**
   * Writes the pending rows in one transaction. With `waitForLocks: false` a database locked by another
   * connection fails at once (SQLITE_BUSY) instead of waiting the connection's busy timeout.
   */
  flush(options: { waitForLocks?: boolean } = {}): void {
    if (this.#pending.size === 0) return;
    const rows = [...this.#pending.values()];
    this.#pending.clear();
    const busyTimeout = options.waitForLocks === false ? (this.#db.pragma('busy_timeout', { simple: true }) as number) : 0;
    if (busyTimeout > 0) this.#db.pragma('busy_timeout = 0');
    try {
      this.#db.transaction(() => {
        for (const r of rows) this.#upsert.run(r);
      })();
    } catch (error) {
      // Put them back (merged with anything recorded since) so the next flush retries.
      for (const r of rows) {
        const key = JSON.stringify([r.day, r.team, r.project, r.model]);
        const cur = this.#pending.get(key);
        if (!cur) this.#pending.set(key, r);
        else {
          cur.requests += r.requests;
          cur.prompt_tokens += r.prompt_tokens;
          cur.cached_tokens += r.cached_tokens;
          cur.completion_tokens += r.completion_tokens;
        }
      }
      throw error;
    } finally {
      if (busyTimeout > 0) this.#db.pragma(`busy_timeout = ${busyTimeout}`);
    }
  }

  /**
   * Announces `work`, a write of this process on another connection (lib/server/log-route.ts): while
   * it is in flight, timed flushes it locks out are retried without a warning.
   */
  async writesElsewhere<T>(work: Promise<T>): Promise<T> {
    this.#writesElsewhere += 1;
    try {
      return await work;
    } finally {
      this.#writesElsewhere -= 1;
    }
  }

  /** Final flush; stops the timer. */
  close(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    this.flush();
  }
}

/** Usage rows from `since` (YYYY-MM-DD, inclusive) on, ordered by day, team, project, model. */
export function readUsage(db: Database, since?: string): UsageRow[] {
  return db
    .prepare(`SELECT day, team, project, model, requests, prompt_tokens, cached_tokens, completion_tokens FROM usage
      WHERE day >= ? ORDER BY day, team, project, model`)
    .all(since ?? '0000-00-00') as UsageRow[];
}
