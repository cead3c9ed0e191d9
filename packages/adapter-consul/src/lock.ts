import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { LockLostError, systemClock, type Clock } from '@muster/core';
import {
  fencingTokenFloor,
  nextFencingToken,
  parseFencingToken,
  sleep,
  type BackendCallOptions,
  type LeaseGrant,
  type LockBackend,
} from '@muster/core/adapter';
import { checkKeyName, keyPath, type ConsulClient } from './client.js';
import { createSession, destroySession, renewSession, type SessionBehavior } from './session.js';

export interface ConsulLockOptions {
  /** KV prefix of Muster's keys (default `muster/`); locks live under `<prefix>locks/`, their tokens under `<prefix>fencing/`. */
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
  /** The local time line waits are measured on (core's Clock; the system clock by default). */
  readonly clock?: Clock;
  /** Wall-clock milliseconds since the Unix epoch, the floor of fencing tokens (Date.now by default). */
  readonly wallClock?: () => number;
}

interface KvEntry {
  readonly Key: string;
  readonly ModifyIndex: number;
  readonly LockIndex: number;
  readonly Session?: string;
  readonly Value?: string | null;
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

/** A session kept from a refused attempt for the next one, so waiting costs no session churn. */
interface Spare {
  readonly session: string;
  readonly ttl: number;
}

/** Position of the token key's check in the acquire transaction. */
const fenceCheckOp = 0;

/**
 * Locks on Consul sessions and KV acquire, one session per held lease.
 *
 * Acquire is one transaction (`/v1/txn`) of three operations: check that the lock's token key is
 * as this attempt read it, write the next token there, and take the lock key (verb `lock`). Either
 * all happen or none, so each acquisition's token is above the one before it.
 *
 * Fencing token: core's nextFencingToken (coordination/fencing-token.ts). It lives in `<prefix>fencing/<name>`, a key bound to no
 * session, so it survives the lock key's deletion (behavior=delete, `consul kv delete`) and an
 * ordinary restart of the servers; after the servers lose their data, the acquirer's wall clock
 * (µs) orders the next token above the old ones. LockIndex, part of Consul's documented sequencer,
 * restarts at 1 on a recreated key, and ModifyIndex restarts with the Raft log: neither is used.
 */
export class ConsulLockBackend implements LockBackend {
  readonly holder: string;
  readonly #client: ConsulClient;
  readonly #options: ConsulLockOptions;
  readonly #clock: Clock;
  readonly #wallClock: () => number;
  readonly #spares = new Map<string, Spare>();
  readonly #lastWake = new Map<string, number>();
  readonly #givingBack = new Set<Promise<void>>();
  /** The highest token this process has read or issued per lock: a floor the backend cannot take away. */
  readonly #seen = new Map<string, bigint>();

  constructor(client: ConsulClient, options: ConsulLockOptions) {
    this.#client = client;
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
    this.#wallClock = options.wallClock ?? Date.now;
    this.holder = options.holder ?? `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`;
  }

  get #rule(): string {
    return `key_prefix "${this.#options.keyPrefix}" { policy = "write" }`;
  }

  #key(name: string): string {
    return `${this.#options.keyPrefix}locks/${checkKeyName('lock name', name)}`;
  }

  #fenceKey(name: string): string {
    return `${this.#options.keyPrefix}fencing/${name}`;
  }

  #see(name: string, token: bigint | undefined): void {
    const seen = this.#seen.get(name);
    if (token !== undefined && (seen === undefined || token > seen)) this.#seen.set(name, token);
  }

  /**
   * A session for one attempt, created or renewed during it. Consul promises a session only for
   * its TTL after the last renewal, and createLock() counts a won lease from the start of the
   * attempt; a spare left unrenewed since an earlier attempt could be reaped (Consul reaps after up
   * to 2×TTL) soon after a late win, freeing the lock under a holder that believes it holds it.
   */
  async #session(name: string, ttl: number, signal: AbortSignal): Promise<string> {
    const spare = this.#spares.get(name);
    this.#spares.delete(name);
    if (spare && spare.ttl === ttl) {
      let renewed: boolean;
      try {
        renewed = await renewSession(this.#client, spare.session, signal);
      } catch (error) {
        this.#spares.set(name, spare); // still ours to reuse or destroy
        throw error;
      }
      if (renewed) return spare.session;
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
    const fenceKey = this.#fenceKey(name);
    const session = await this.#session(name, ttl, signal);
    let token: bigint;
    let body: unknown[];
    try {
      const read = await this.#client.get<KvEntry[]>(`/v1/kv/${keyPath(fenceKey)}`, {
        accept: [404],
        signal,
        purpose: `read fencing token key ${fenceKey}`,
      });
      const fence = read.status === 404 ? undefined : read.body?.[0];
      const stored = parseFencingToken(fence?.Value ? Buffer.from(fence.Value, 'base64').toString('utf8') : undefined);
      this.#see(name, stored);
      token = nextFencingToken(stored, this.#seen.get(name), fencingTokenFloor(this.#wallClock()));
      const check = fence ? { Verb: 'check-index', Key: fenceKey, Index: fence.ModifyIndex } : { Verb: 'check-not-exists', Key: fenceKey };
      const value = Buffer.from(JSON.stringify({ holder: this.holder, token: token.toString() })).toString('base64');
      body = [
        { KV: check },
        { KV: { Verb: 'set', Key: fenceKey, Value: Buffer.from(token.toString()).toString('base64') } },
        { KV: { Verb: 'lock', Key: key, Value: value, Session: session } },
      ];
    } catch (error) {
      this.#spares.set(name, { session, ttl });
      throw error;
    }
    let res;
    try {
      res = await this.#client.put<TxnResponse>('/v1/txn', {
        body,
        accept: [409],
        signal,
        purpose: `acquire lock key ${key}`,
        rule: this.#rule,
      });
    } catch (error) {
      // A 4xx answer (429 included) says the transaction was not applied: the session may wait for the next attempt.
      const status = (error as { status?: unknown }).status;
      if (typeof status === 'number' && status < 500) this.#spares.set(name, { session, ttl });
      else this.#giveBack(name, { session, key });
      throw error;
    }
    // Results are not positional (a check-not-exists answers none): find the lock key's own.
    if (res.status === 200 && res.body?.Results?.some((r) => r.KV?.Key === key)) {
      this.#see(name, token);
      return { token, state: { session, key } satisfies Held };
    }
    const errors = res.body?.Errors ?? [];
    const why = errors.map((e) => e.What).join('; ');
    if (/invalid session/i.test(why)) return 'invalid session';
    const lockRefused = /already held|lock delay/i.test(why);
    // The token key changed since it was read: another contender took the lock in between.
    const raced = errors.length > 0 && errors.every((e) => e.OpIndex === fenceCheckOp && /index|exist/i.test(e.What));
    if (!lockRefused && !raced) {
      await destroySession(this.#client, session, signal).catch(() => undefined);
      throw this.#client.transactionError(why || `HTTP ${res.status}`, { purpose: `acquire lock key ${key}`, rule: this.#rule });
    }
    this.#spares.set(name, { session, ttl });
    if (/lock delay/i.test(why)) this.#lastWake.set(name, -1);
    return undefined;
  }

  /**
   * After an acquire transaction whose outcome is unknown (aborted, cut off or timed out once sent,
   * or a 5xx, which Consul also answers when a Raft apply times out: the agent may have applied it,
   * and nobody will hold that grant), frees the key if this session took it
   * and destroys the session, in the background. Kept as a spare, the session would hold the lock
   * unrenewed until Consul reaps it (ttl to 2 × ttl), and then lock-delay would keep it shut.
   */
  #giveBack(name: string, held: Held): void {
    const done: Promise<void> = this.release(name, { token: 0n, state: held }, { signal: AbortSignal.timeout(giveBackMs) })
      .catch((error: unknown) => {
        process.emitWarning(
          `lock '${name}': an acquire whose outcome is unknown could not be given back; if it took the lock, the lock is free after its ttl and lock-delay: ${(error as Error)?.message ?? String(error)}`,
          { type: 'MusterWarning', code: 'MUSTER_RELEASE_FAILED' },
        );
      })
      .finally(() => this.#givingBack.delete(done));
    this.#givingBack.add(done);
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
    // gets in at once. The token key stays: the next holder counts on from it.
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
    const started = this.#clock.now();
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
      const left = maxWaitMs - (this.#clock.now() - started);
      if (left <= 0) return;
      // Never block on index 0: Consul would answer at once, every time.
      const index = now.index !== undefined && now.index > 0n ? now.index : 1n;
      await this.#client.get(`/v1/kv/${keyPath(key)}`, { index, wait: left, accept: [404], signal, purpose: `watch lock key ${key}` });
    } finally {
      this.#lastWake.set(name, this.#clock.now());
    }
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.#givingBack]);
    const signal = AbortSignal.timeout(5000);
    const spares = [...this.#spares.values()];
    this.#spares.clear();
    await Promise.allSettled(spares.map((s) => destroySession(this.#client, s.session, signal)));
    this.#client.close();
  }
}

const minWakeInterval = 50;
/** How long a give-back (#giveBack) may take; the agent's own request timeout is 10 s. */
const giveBackMs = 5000;
