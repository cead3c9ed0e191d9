/**
 * The bytes of partly received requests across all client connections, against one cap. Each
 * connection may buffer up to a whole frame (maxFrameBytes) while it arrives; without a shared cap,
 * a thousand connections each sending most of a large frame would hold gigabytes. A connection
 * whose growth would pass the cap is refused (it gets OVERLOADED and is closed); bytes that arrive
 * with their whole frame are never buffered and never count.
 */
export class BufferBudget {
  readonly limit: number;
  #used = 0;

  constructor(limit: number) {
    this.limit = limit;
  }

  get used(): number {
    return this.#used;
  }

  /**
   * A holder that held `from` bytes now holds `to`. Shrinking always succeeds; growing succeeds
   * when the total stays within the cap, and is not recorded otherwise (the caller then frees them).
   */
  move(from: number, to: number): boolean {
    if (to > from && this.#used - from + to > this.limit) return false;
    this.#used += to - from;
    return true;
  }
}
