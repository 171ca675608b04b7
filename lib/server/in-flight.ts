// The server's requests in flight, for the drain: each counts from its arrival until its handler settled
// (its usage is counted by then, docs/cli.md: shutdown) and its response closed. The drain awaits the
// moment none is left instead of polling for it.

export class InFlight {
  #count = 0;
  readonly #waiters = new Set<() => void>();

  get size(): number {
    return this.#count;
  }

  /** Counts one request until every one of `parts` settled (fulfilled or rejected). */
  track(parts: Promise<unknown>[]): void {
    this.#count++;
    void Promise.allSettled(parts).then(() => {
      if (--this.#count > 0) return;
      for (const wake of [...this.#waiters]) wake();
    });
  }

  /** Resolves true once nothing is in flight (at once when nothing is), false after `timeoutMs`. */
  idle(timeoutMs: number): Promise<boolean> {
    if (this.#count === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        this.#waiters.delete(wake);
        resolve(true);
      };
      const timer = setTimeout(() => {
        this.#waiters.delete(wake);
        resolve(false);
      }, Math.max(0, timeoutMs));
      this.#waiters.add(wake);
    });
  }
}
