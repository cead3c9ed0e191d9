import { randomUUID } from 'node:crypto';
import { LockLostError, systemClock, type Clock } from '@muster/core';
import type { BackendCallOptions, LeaseGrant, LockBackend } from '@muster/core/adapter';

interface Entry {
  holder: string;
  expiresAt: number;
  /** Bumped each time the lock changes hands; never reset, so tokens only grow. */
  token: bigint;
  waiters: Set<() => void>;
}

/** Lock tables shared by every static lock client in this process, one per scope. */
const tables = new Map<string, Map<string, Entry>>();

export function lockTable(scope: string): Map<string, Entry> {
  let table = tables.get(scope);
  if (!table) tables.set(scope, (table = new Map()));
  return table;
}

/**
 * An in-process lock: exact within one process (every client in the same scope shares one table)
 * and meaningless across processes. Expiry uses the injected clock, so tests can move time.
 */
export class StaticLockBackend implements LockBackend {
  readonly holder: string;
  readonly #table: Map<string, Entry>;
  readonly #clock: Clock;

  constructor(options: { scope: string; holder?: string; clock?: Clock }) {
    this.#table = lockTable(options.scope);
    this.holder = options.holder ?? `static-${randomUUID()}`;
    this.#clock = options.clock ?? systemClock;
  }

  #entry(name: string): Entry {
    let entry = this.#table.get(name);
    if (!entry) this.#table.set(name, (entry = { holder: '', expiresAt: 0, token: 0n, waiters: new Set() }));
    return entry;
  }

  #free(entry: Entry): boolean {
    return entry.holder === '' || this.#clock.now() >= entry.expiresAt;
  }

  async tryAcquire(name: string, { ttl }: BackendCallOptions): Promise<LeaseGrant | undefined> {
    const entry = this.#entry(name);
    if (entry.holder === this.holder && !this.#free(entry)) return undefined;
    if (!this.#free(entry)) return undefined;
    entry.holder = this.holder;
    entry.token += 1n;
    entry.expiresAt = this.#clock.now() + ttl;
    return { token: entry.token };
  }

  async renew(name: string, grant: LeaseGrant, { ttl }: BackendCallOptions): Promise<LeaseGrant> {
    const entry = this.#entry(name);
    if (entry.holder !== this.holder || entry.token !== grant.token || this.#free(entry)) {
      throw new LockLostError(name, entry.token !== grant.token ? 'another holder acquired it' : 'the lease expired before it was renewed');
    }
    entry.expiresAt = this.#clock.now() + ttl;
    return grant;
  }

  async release(name: string, grant: LeaseGrant): Promise<void> {
    const entry = this.#entry(name);
    if (entry.holder !== this.holder || entry.token !== grant.token) return;
    entry.holder = '';
    entry.expiresAt = 0;
    for (const wake of entry.waiters) wake();
  }

  waitForChange(name: string, { signal, maxWaitMs }: { signal: AbortSignal; maxWaitMs: number }): Promise<void> {
    const entry = this.#entry(name);
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        entry.waiters.delete(done);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(1, Math.min(maxWaitMs, entry.holder ? entry.expiresAt - this.#clock.now() + 1 : maxWaitMs)));
      entry.waiters.add(done);
      signal.addEventListener('abort', done, { once: true });
    });
  }
}
