import type { Lease, Lock } from '@muster/core';

/**
 * Work only one instance may do at a time. It holds its lease while it runs and gives it back in
 * `stop()`, which the container calls when the application's module unloads: before Muster's
 * module unloads, so the Lock is still open to release it.
 */
export class Compaction {
  #lease: Lease | undefined;

  constructor(readonly lock: Lock) {}

  /** Takes the lease if it is free; false when another instance holds it. */
  async start(): Promise<boolean> {
    this.#lease ??= await this.lock.tryAcquire('compaction', { ttl: 15_000 });
    return this.#lease !== undefined;
  }

  /** The token to send with every write, so that a stale holder is refused by the store. */
  get fencingToken(): bigint | undefined {
    return this.#lease?.token;
  }

  async stop(): Promise<void> {
    const lease = this.#lease;
    this.#lease = undefined;
    await lease?.release();
  }
}
