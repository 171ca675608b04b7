// NOTE(server/rate-limit): per-key limits (--rate-limit-requests, --rate-limit-tokens, both per minute) as
// token buckets: each key's bucket holds up to the per-minute limit and refills continuously at
// limit / 60 per second, so a key may burst up to a minute's worth and then runs at the rate. A request
// takes one from the request bucket; tokens (prompt + completion) are charged when a request finishes,
// so the token bucket may go below zero and the key waits until it is back above. A refused request is
// a 429 whose Retry-After says when the bucket will allow it. Keys are identified by their index in the
// configured list (never the key itself); an open server (no keys) has one shared bucket.

export interface RateLimits {
  /** Requests per minute per key. */
  requestsPerMinute?: number;
  /** Prompt + completion tokens per minute per key. */
  tokensPerMinute?: number;
}

/** A refusal: which limit, and the whole seconds until it would admit the request. */
export interface RateRefusal {
  limit: 'requests' | 'tokens';
  perMinute: number;
  retryAfterSeconds: number;
}

class Bucket {
  #level: number;
  #at: number;
  constructor(readonly capacity: number, now: number) {
    this.#level = capacity;
    this.#at = now;
  }

  /** The level after refilling up to `now`. */
  level(now: number): number {
    this.#level = Math.min(this.capacity, this.#level + ((now - this.#at) / 60_000) * this.capacity);
    this.#at = now;
    return this.#level;
  }

  take(amount: number, now: number): void {
    this.level(now);
    this.#level -= amount;
  }

  /** Milliseconds until the level reaches `target`. */
  msUntil(target: number, now: number): number {
    const missing = target - this.level(now);
    return missing <= 0 ? 0 : (missing / this.capacity) * 60_000;
  }
}

/** Whole seconds (at least 1) covering `ms`; rounded to the millisecond first so float dust (1000.0000001) does not add a second. */
const seconds = (ms: number): number => Math.max(1, Math.ceil(Math.round(ms) / 1000));

export class RateLimiter {
  readonly #limits: RateLimits;
  readonly #now: () => number;
  readonly #requests = new Map<string, Bucket>();
  readonly #tokens = new Map<string, Bucket>();

  constructor(limits: RateLimits, now: () => number = Date.now) {
    this.#limits = limits;
    this.#now = now;
  }

  get enabled(): boolean {
    return this.#limits.requestsPerMinute !== undefined || this.#limits.tokensPerMinute !== undefined;
  }

  #bucket(map: Map<string, Bucket>, key: string, capacity: number): Bucket {
    let b = map.get(key);
    if (!b) map.set(key, (b = new Bucket(capacity, this.#now())));
    return b;
  }

  /** Admits (and counts) one request of `key`, or says why not and for how long. */
  admit(key: string): RateRefusal | null {
    const now = this.#now();
    const { requestsPerMinute: rpm, tokensPerMinute: tpm } = this.#limits;
    if (tpm !== undefined) {
      const tokens = this.#bucket(this.#tokens, key, tpm);
      // Over the token budget (charged after the fact): wait until the debt is repaid.
      if (tokens.level(now) < 0) return { limit: 'tokens', perMinute: tpm, retryAfterSeconds: seconds(tokens.msUntil(0, now)) };
    }
    if (rpm !== undefined) {
      const requests = this.#bucket(this.#requests, key, rpm);
      if (requests.level(now) < 1) return { limit: 'requests', perMinute: rpm, retryAfterSeconds: seconds(requests.msUntil(1, now)) };
      requests.take(1, now);
    }
    return null;
  }

  /** Charges a finished request's tokens to `key`. */
  charge(key: string, tokens: number): void {
    const tpm = this.#limits.tokensPerMinute;
    if (tpm === undefined || !(tokens > 0)) return;
    this.#bucket(this.#tokens, key, tpm).take(tokens, this.#now());
  }
}
