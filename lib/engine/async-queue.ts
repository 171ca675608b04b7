// A single-consumer async queue: push() from the router, iterate with for-await. Ends after close().
export class AsyncQueue<T> implements AsyncIterableIterator<T> {
  #items: T[] = [];
  #waiting: ((r: IteratorResult<T>) => void) | null = null;
  #closed = false;

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
    this.#closed = true;
    if (this.#waiting && this.#items.length === 0) {
      const resolve = this.#waiting;
      this.#waiting = null;
      resolve({ value: undefined, done: true });
    }
  }

  next(): Promise<IteratorResult<T>> {
    if (this.#items.length > 0) return Promise.resolve({ value: this.#items.shift() as T, done: false });
    if (this.#closed) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => {
      this.#waiting = resolve;
    });
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<T> {
    return this;
  }
}
