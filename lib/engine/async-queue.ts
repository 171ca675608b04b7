// A single-consumer async queue: push() from the router, iterate with for-await. Ends after close().
//
// With a `cancel` callback, a consumer that leaves the loop early (break, return, throw: the iterator's
// return()) cancels the producer and waits until it closes the queue: when the loop is left, the
// producer has ended (for an engine request: its final record arrived, its sequence is freed). Without
// one, return() leaves the queue as it is, so a later loop can go on reading it.
export class AsyncQueue<T> implements AsyncIterableIterator<T> {
  #items: T[] = [];
  #waiting: ((r: IteratorResult<T>) => void) | null = null;
  #closed = false;
  #onClose: (() => void)[] = [];
  readonly #cancel: (() => void) | undefined;

  constructor(cancel?: () => void) {
    this.#cancel = cancel;
  }

  push(item: T): void {
    if (this.#closed) return;
    if (this.#waiting) {
      const resolve = this.#waiting;
      this.#waiting = null;
      resolve({ value: item, done: false });
    } else {
      this.#items.push(item);
    }
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#waiting && this.#items.length === 0) {
      const resolve = this.#waiting;
      this.#waiting = null;
      resolve({ value: undefined, done: true });
    }
    for (const f of this.#onClose.splice(0)) f();
  }

  /** Runs `f` once the queue is closed (at once when it already is). */
  onClose(f: () => void): void {
    if (this.#closed) f();
    else this.#onClose.push(f);
  }

  next(): Promise<IteratorResult<T>> {
    if (this.#items.length > 0) return Promise.resolve({ value: this.#items.shift() as T, done: false });
    if (this.#closed) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => {
      this.#waiting = resolve;
    });
  }

  async return(): Promise<IteratorResult<T>> {
    if (this.#cancel) {
      if (!this.#closed) {
        this.#cancel();
        await new Promise<void>((resolve) => this.onClose(resolve));
      }
      this.#items = [];
    }
    return { value: undefined, done: true };
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<T> {
    return this;
  }
}
