import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { InvalidArgumentError, LockLostError, sleep, type BackendCallOptions, type LeaseGrant, type LockBackend } from '@muster/core';
import { keyPath, type ConsulClient } from './client.js';
import { createSession, destroySession, renewSession, type SessionBehavior } from './session.js';

export interface ConsulLockOptions {
  /** KV prefix of Muster's keys (default `muster/`); locks live under `<prefix>locks/`. */
  readonly keyPrefix: string;
  readonly holder?: string;
  /** `release` (default) clears the key's holder when the session dies; `delete` removes the key. */
  readonly behavior: SessionBehavior;
  /**
   * How long Consul refuses a new acquire after a holder's session is invalidated (expiry, agent
   * or node failure). Consul's default is 15 s, which is added to every failover after a crash:
   * a dead holder's lock is free after ttl..2×ttl (Consul reaps sessions late, never early) plus
   * this. A graceful release() does not trigger it. Lower it when the protected work checks the
   * fencing token; keep it when it cannot, since it gives a paused old holder time to notice.
   */
  readonly lockDelay: number;
}

interface KvEntry {
  readonly Key: string;
  readonly ModifyIndex: number;
  readonly LockIndex: number;
  readonly Session?: string;
}

interface TxnResponse {
  readonly Results?: { KV?: KvEntry }[] | null;
  readonly Errors?: { OpIndex: number; What: string }[] | null;
}

/** What a renewal and a release need: the lease's own session and its key. */
interface Held {
  readonly session: string;
  readonly key: string;
}

/** Sessions kept from a failed attempt for the next one, so waiting costs no session churn. */
interface Spare {
  readonly session: string;
  readonly ttl: number;
  renewedAt: number;
}

/**
 * Locks on Consul sessions and KV acquire, one session per held lease.
 *
 * Acquire is a one-operation transaction (`/v1/txn`, verb `lock`) rather than `PUT ?acquire`,
 * because the transaction answers with the entry it wrote: its ModifyIndex is the fencing token,
 * read in the same atomic step that took the lock.
 *
 * Fencing token = the key's ModifyIndex at acquire. It is the Raft index of the write that took
 * the lock, so it rises with every change of holder across all holders, and it keeps rising when
 * the key is deleted and recreated (behavior=delete, an operator's `consul kv delete`). LockIndex,
 * part of Consul's documented sequencer (key, LockIndex, session), restarts at 1 on a recreated
 * key, so alone it is not an order. Neither survives a cluster that loses its Raft log (a dev
 * agent restarting, a cluster rebuilt without a snapshot): indexes start again from 1, and a
 * resource fenced across that must be reset with it.
 */
export class ConsulLockBackend implements LockBackend {
  readonly holder: string;
  readonly #client: ConsulClient;
  readonly #options: ConsulLockOptions;
  readonly #spares = new Map<string, Spare>();
  readonly #lastWake = new Map<string, number>();

  constructor(client: ConsulClient, options: ConsulLockOptions) {
    this.#client = client;
    this.#options = options;
    this.holder = options.holder ?? `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`;
  }

  get #rule(): string {
    return `key_prefix "${this.#options.keyPrefix}" { policy = "write" }`;
  }

  #key(name: string): string {
    if (!name || name.startsWith('/') || name.endsWith('/')) {
      throw new InvalidArgumentError(`lock name ${JSON.stringify(name)}: must be non-empty and not start or end with '/'`);
    }
    return `${this.#options.keyPrefix}locks/${name}`;
  }

  async #session(name: string, ttl: number, signal: AbortSignal): Promise<string> {
    const spare = this.#spares.get(name);
    this.#spares.delete(name);
    if (spare && spare.ttl === ttl) {
      // Consul keeps an idle session for at least its TTL; renew one that has idled a while, so
      // the lease that starts now is not shorter on the server than the keeper believes.
      if (Date.now() - spare.renewedAt < ttl / 4) return spare.session;
      if (await renewSession(this.#client, spare.session, signal)) return spare.session;
    } else if (spare) {
      await destroySession(this.#client, spare.session, signal).catch(() => undefined);
    }
    return createSession(this.#client, {
      name: `muster lock ${name} (${this.holder})`,
      ttl,
      behavior: this.#options.behavior,
      lockDelay: this.#options.lockDelay,
      signal,
    });
  }

  async tryAcquire(name: string, options: BackendCallOptions): Promise<LeaseGrant | undefined> {
    const first = await this.#attempt(name, options);
    // The session vanished between create and use (the agent lost its state): one more try with a new one.
    return first === 'invalid session' ? ((await this.#attempt(name, options)) as LeaseGrant | undefined) : first;
  }

  async #attempt(name: string, { ttl, signal }: BackendCallOptions): Promise<LeaseGrant | undefined | 'invalid session'> {
    const key = this.#key(name);
    const session = await this.#session(name, ttl, signal);
    const value = Buffer.from(JSON.stringify({ holder: this.holder })).toString('base64');
    let res;
    try {
      res = await this.#client.put<TxnResponse>('/v1/txn', {
        body: [{ KV: { Verb: 'lock', Key: key, Value: value, Session: session } }],
        accept: [409],
        signal,
        purpose: `acquire lock key ${key}`,
        rule: this.#rule,
      });
    } catch (error) {
      this.#spares.set(name, { session, ttl, renewedAt: Date.now() });
      throw error;
    }
    const entry = res.body?.Results?.[0]?.KV;
    if (res.status === 200 && entry) return { token: BigInt(entry.ModifyIndex), state: { session, key } satisfies Held };
    const why = res.body?.Errors?.map((e) => e.What).join('; ') ?? '';
    if (/invalid session/i.test(why)) return 'invalid session';
    if (!/already held|lock delay/i.test(why)) {
      await destroySession(this.#client, session, signal).catch(() => undefined);
      throw this.#client.transactionError(why || `HTTP ${res.status}`, { purpose: `acquire lock key ${key}`, rule: this.#rule });
    }
    this.#spares.set(name, { session, ttl, renewedAt: Date.now() });
    if (/lock delay/i.test(why)) this.#lastWake.set(name, -1);
    return undefined;
  }

  async renew(name: string, grant: LeaseGrant, { signal }: BackendCallOptions): Promise<LeaseGrant> {
    const { session, key } = grant.state as Held;
    // Both checks at once: the session must live, and the key must still name it. Another
    // session can hold the key only if ours was invalidated in between, but an operator may also
    // delete or overwrite it; either way this holder must stop.
    const [renewed, read] = await Promise.all([
      renewSession(this.#client, session, signal),
      this.#client.get<KvEntry[]>(`/v1/kv/${keyPath(key)}`, { accept: [404], signal, purpose: `check lock key ${key}` }),
    ]);
    if (!renewed) throw new LockLostError(name, `Consul session ${session} is gone (expired, destroyed, or the agent lost its state)`);
    const entry = read.status === 404 ? undefined : read.body?.[0];
    if (!entry) throw new LockLostError(name, `key ${key} was deleted`);
    if (entry.Session !== session) {
      throw new LockLostError(
        name,
        entry.Session ? `key ${key} is held by another session (${entry.Session})` : `key ${key} was released by someone else`,
      );
    }
    return grant;
  }

  async release(name: string, grant: LeaseGrant, { signal }: { signal: AbortSignal }): Promise<void> {
    const { session, key } = grant.state as Held;
    // Release the key before destroying the session: Consul applies lock-delay to keys freed by a
    // session's invalidation (destroy included), not to an explicit unlock, so the next contender
    // gets in at once.
    const ops =
      this.#options.behavior === 'delete'
        ? [{ KV: { Verb: 'check-session', Key: key, Session: session } }, { KV: { Verb: 'delete', Key: key } }]
        : [{ KV: { Verb: 'unlock', Key: key, Session: session } }];
    try {
      await this.#client.put<TxnResponse>('/v1/txn', { body: ops, accept: [409], signal, purpose: `release lock key ${key}` });
    } finally {
      await destroySession(this.#client, session, signal);
    }
  }

  /**
   * A blocking query on the key: returns when the key changes (a release, an expiry, a new
   * holder), when it is free already, or after `maxWaitMs`.
   */
  async waitForChange(name: string, { signal, maxWaitMs }: { signal: AbortSignal; maxWaitMs: number }): Promise<void> {
    const key = this.#key(name);
    const started = Date.now();
    // A key that changes constantly (someone writing to it) must not turn waiting into a busy loop.
    const last = this.#lastWake.get(name);
    if (last === -1) {
      // Refused for lock-delay: the key itself will not change when the delay ends, so poll.
      this.#lastWake.set(name, started);
      await sleep(Math.min(maxWaitMs, 500), signal);
      return;
    }
    if (last !== undefined && started - last < minWakeInterval) await sleep(minWakeInterval - (started - last), signal);
    try {
      const now = await this.#client.get<KvEntry[]>(`/v1/kv/${keyPath(key)}`, { accept: [404], signal, purpose: `watch lock key ${key}` });
      const entry = now.status === 404 ? undefined : now.body?.[0];
      if (!entry?.Session) return;
      const left = maxWaitMs - (Date.now() - started);
      if (left <= 0) return;
      // Never block on index 0: Consul would answer at once, every time.
      const index = now.index !== undefined && now.index > 0n ? now.index : 1n;
      await this.#client.get(`/v1/kv/${keyPath(key)}`, { index, wait: left, accept: [404], signal, purpose: `watch lock key ${key}` });
    } finally {
      this.#lastWake.set(name, Date.now());
    }
  }

  async close(): Promise<void> {
    const signal = AbortSignal.timeout(5000);
    const spares = [...this.#spares.values()];
    this.#spares.clear();
    await Promise.allSettled(spares.map((s) => destroySession(this.#client, s.session, signal)));
    this.#client.close();
  }
}

const minWakeInterval = 50;
