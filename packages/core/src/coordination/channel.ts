/**
 * A push-to-pull bridge for watch streams: a producer pushes items, one consumer iterates them.
 * When the consumer stops early (break, return, throw) or `signal` aborts, `onStop` runs so the
 * producer can tear its loop down; after that, pushes are ignored. An abort ends the stream
 * normally: a `for await` loop over it simply finishes.
 */
export class EventChannel<T> implements AsyncIterableIterator<T> {
  readonly #queue: T[] = [];
  #waiter: { resolve: (r: IteratorResult<T>) => void; reject: (e: unknown) => void } | undefined;
  #ended = false;
  #error: unknown;
  readonly #onStop: () => void;
  readonly #signal: AbortSignal | undefined;
  readonly #onAbort = () => this.end();

  constructor(onStop: () => void, signal?: AbortSignal) {
    this.#onStop = onStop;
    this.#signal = signal;
    if (signal?.aborted) queueMicrotask(this.#onAbort);
    else signal?.addEventListener('abort', this.#onAbort, { once: true });
  }

  get stopped(): boolean {
    return this.#ended;
  }

  push(item: T): void {
    if (this.#ended) return;
    if (this.#waiter) {
      const { resolve } = this.#waiter;
      this.#waiter = undefined;
      resolve({ value: item, done: false });
    } else {
      this.#queue.push(item);
    }
  }

  /** Ends the stream after the queued items; the consumer's loop finishes normally. */
  end(): void {
    this.#finish(undefined);
  }

  /** Ends the stream with an error; the consumer's loop throws it after the queued items. */
  fail(error: unknown): void {
    this.#finish(error ?? new Error('watch failed'));
  }

  #finish(error: unknown): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#error = error;
    this.#signal?.removeEventListener('abort', this.#onAbort);
    this.#onStop();
    if (this.#waiter && this.#queue.length === 0) {
      const waiter = this.#waiter;
      this.#waiter = undefined;
      if (error === undefined) waiter.resolve({ value: undefined, done: true });
      else waiter.reject(error);
    }
  }

  next(): Promise<IteratorResult<T>> {
    if (this.#queue.length > 0) return Promise.resolve({ value: this.#queue.shift()!, done: false });
    if (this.#ended) {
      const error = this.#error;
      this.#error = undefined; // an error is thrown once; the iterator is done after it
      return error === undefined ? Promise.resolve({ value: undefined, done: true }) : Promise.reject(error);
    }
    return new Promise((resolve, reject) => {
      this.#waiter = { resolve, reject };
    });
  }

  return(): Promise<IteratorResult<T>> {
    this.#queue.length = 0;
    this.#finish(undefined);
    this.#error = undefined;
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}
