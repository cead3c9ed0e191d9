/**
 * Stream ids of one connection (v3+: 0..32767; negative ids are the server's). Ids are handed out
 * lowest-free-first from a free list, so a busy connection reuses a small set and lookups stay in
 * a dense array.
 */
export class StreamIds {
  readonly #free: number[] = [];
  #next = 0;
  readonly #limit: number;
  #inUse = 0;

  constructor(limit = 32768) {
    this.#limit = limit;
  }

  get inUse(): number {
    return this.#inUse;
  }

  /** A free id, or undefined when every id is in flight. */
  take(): number | undefined {
    const id = this.#free.pop() ?? (this.#next < this.#limit ? this.#next++ : undefined);
    if (id !== undefined) this.#inUse++;
    return id;
  }

  give(id: number): void {
    this.#free.push(id);
    this.#inUse--;
  }
}
