// NOTE(workers/fair-gate): admission to a fixed number of slots (workers, native tokenize jobs) shared by
// clients (an API key, else a remote address; the library's caller names it). A client holds at most
// `perClient` slots at once, so one client can never occupy every slot and the others keep being
// served; its further work waits in FIFO order, and beyond `waitingPerClient` waiting items it is
// refused with a 429 (503 when the whole gate has `waitingTotal` waiting). A waiter whose signal aborts
// (its client disconnected) leaves the line at once and never starts. Invariant: after every change the
// gate dispatches, so a waiter left waiting is blocked by its client's cap or by no free slot.
import { OverloadedError } from '../engine/errors.js';

export interface GateLimits {
  /** Work items running at once. */
  slots: number;
  /** Work items one client may run at once (at most `slots`). */
  perClient: number;
  /** Items one client may have waiting before its next one is refused (429). */
  waitingPerClient: number;
  /** Items all clients together may have waiting before the next one is refused (503). */
  waitingTotal: number;
  /** Retry-After of a refusal: when a slot can be expected to free (the work's time limit). */
  retryAfterSeconds: number;
}

export interface GateStats {
  running: number;
  waiting: number;
  /** Refusals (429 and 503) since the gate was made. */
  refused: number;
}

/** Frees the slot; calling it again does nothing. */
export type Release = () => void;

interface Waiter {
  client: string;
  start: (release: Release) => void;
}

/** The reason an aborted signal carries (an AbortError DOMException unless the caller gave one). */
export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

export class FairGate {
  #running = 0;
  #refused = 0;
  readonly #inFlight = new Map<string, number>();
  readonly #waiting: Waiter[] = [];
  readonly #waitingOf = new Map<string, number>();

  /** `what` names the work in refusal messages ("chat template and grammar work"). */
  constructor(readonly limits: GateLimits, private readonly what: string) {
    if (!(limits.slots >= 1 && limits.perClient >= 1)) throw new RangeError('FairGate: slots and perClient must be at least 1');
  }

  /**
   * Waits for a slot for `client`; rejects with OverloadedError when too much is waiting, and with the
   * signal's reason when `signal` is aborted while the work would wait (before or while in line).
   * Work that can start at once starts whatever its signal says: the caller decides what an aborted
   * request still does (a chat ends as finish_reason 'abort' without reaching the engine's queue).
   */
  acquire(client: string, signal?: AbortSignal): Promise<Release> {
    if (this.#waiting.length === 0 && this.#canStart(client)) return Promise.resolve(this.#start(client));
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    const mine = this.#waitingOf.get(client) ?? 0;
    const { waitingPerClient, waitingTotal, retryAfterSeconds } = this.limits;
    if (mine >= waitingPerClient) {
      this.#refused += 1;
      return Promise.reject(new OverloadedError(`Too many requests: ${mine} of this client's requests are already waiting for ${this.what}; retry later.`, 429, retryAfterSeconds));
    }
    if (this.#waiting.length >= waitingTotal) {
      this.#refused += 1;
      return Promise.reject(new OverloadedError(`The server is overloaded: ${this.#waiting.length} requests are waiting for ${this.what}; retry later.`, 503, retryAfterSeconds));
    }
    return new Promise<Release>((resolve, reject) => {
      const onAbort = (): void => {
        const at = this.#waiting.indexOf(waiter);
        if (at < 0) return;
        this.#waiting.splice(at, 1);
        this.#leftLine(client);
        // Leaving may unblock no one (slots are unchanged), but keeps the invariant obviously true.
        this.#dispatch();
        reject(abortReason(signal!));
      };
      const waiter: Waiter = {
        client,
        start: (release) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(release);
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiting.push(waiter);
      this.#waitingOf.set(client, mine + 1);
      this.#dispatch();
    });
  }

  stats(): GateStats {
    return { running: this.#running, waiting: this.#waiting.length, refused: this.#refused };
  }

  #canStart(client: string): boolean {
    return this.#running < this.limits.slots && (this.#inFlight.get(client) ?? 0) < this.limits.perClient;
  }

  #start(client: string): Release {
    this.#running += 1;
    this.#inFlight.set(client, (this.#inFlight.get(client) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#running -= 1;
      const n = (this.#inFlight.get(client) ?? 1) - 1;
      if (n === 0) this.#inFlight.delete(client);
      else this.#inFlight.set(client, n);
      this.#dispatch();
    };
  }

  #dispatch(): void {
    for (let i = 0; i < this.#waiting.length && this.#running < this.limits.slots;) {
      const w = this.#waiting[i]!;
      if (!this.#canStart(w.client)) {
        i += 1;
        continue;
      }
      this.#waiting.splice(i, 1);
      this.#leftLine(w.client);
      w.start(this.#start(w.client));
    }
  }

  #leftLine(client: string): void {
    const n = (this.#waitingOf.get(client) ?? 1) - 1;
    if (n === 0) this.#waitingOf.delete(client);
    else this.#waitingOf.set(client, n);
  }
}
