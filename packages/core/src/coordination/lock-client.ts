import { anySignal, backoffDelay, sleep } from '../abort.js';
import { systemClock, type Clock } from '../clock.js';
import { abortErrorFrom, ClosedError, InvalidArgumentError, LockLostError, MusterError, TimeoutError } from '../errors.js';
import type { AcquireOptions, Lease, Lock } from '../ports/lock.js';

/** What the backend confirmed for one acquire or renewal. */
export interface LeaseGrant {
  /** The fencing token: strictly increases each time the lock changes hands. */
  readonly token: bigint;
  /** Backend-specific state the next renew or release needs (resourceVersion, session id). */
  readonly state?: unknown;
}

export interface BackendCallOptions {
  readonly ttl: number;
  /** Aborts the call (renewals get a timeout of half the renew deadline, as in client-go). */
  readonly signal: AbortSignal;
}

/**
 * The small surface a lock adapter implements; `createLock` builds the Lock port on it (waiting,
 * background renewal, renew deadline, onLost, withLock), so every adapter behaves the same.
 */
export interface LockBackend {
  /** Identity of this client as the backend records it. */
  readonly holder: string;
  /** One attempt. Undefined when another live holder has the lock. */
  tryAcquire(name: string, options: BackendCallOptions): Promise<LeaseGrant | undefined>;
  /** Extends the lease; throws LockLostError when the backend shows it is no longer ours. */
  renew(name: string, grant: LeaseGrant, options: BackendCallOptions): Promise<LeaseGrant>;
  /** Gives the lock up so the next contender need not wait out the ttl. */
  release(name: string, grant: LeaseGrant, options: { signal: AbortSignal }): Promise<void>;
  /**
   * Resolves when the lock may have changed hands, or after `maxWaitMs` (e.g. a Consul blocking
   * query on the key). Without it, acquire polls every retry period.
   */
  waitForChange?(name: string, options: { signal: AbortSignal; maxWaitMs: number }): Promise<void>;
  close?(): Promise<void>;
}

export interface LockTiming {
  /** Lease duration when acquire() is given none (ms). */
  readonly defaultTtl: number;
  /** Smallest ttl the backend can honour (ms). */
  readonly minTtl: number;
  /** Share of the ttl within which a renewal must succeed (client-go: 10 s of 15 s). */
  readonly renewDeadlineRatio: number;
  /** Share of the ttl between retries, of acquire and of a failed renewal (client-go: 2 s of 15 s). */
  readonly retryRatio: number;
}

export const defaultLockTiming: LockTiming = {
  defaultTtl: 15_000,
  minTtl: 100,
  renewDeadlineRatio: 2 / 3,
  retryRatio: 2 / 15,
};

/**
 * A signal that aborts after `ms`, with a timer cleared once the call is done: AbortSignal.timeout
 * would leave one pending timer per renewal (and takes whole milliseconds only).
 */
function timeoutSignal(ms: number): { signal: AbortSignal; clear(): void } {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new TimeoutError(`no answer within ${Math.round(ms)} ms`)), Math.ceil(ms));
  timer.unref();
  return { signal: controller.signal, clear: () => clearTimeout(timer) };
}

/** Errors worth retrying while waiting for a lock: the backend is unreachable or overloaded. */
export function isTransient(error: unknown): boolean {
  if (!MusterError.is(error)) return true;
  if (error.code !== 'MUSTER_BACKEND') return false;
  const status = (error as { status?: number }).status;
  return status === undefined || status === 409 || status === 429 || status >= 500;
}

/**
 * Test hook: stops a client's renewals without releasing anything, as a crashed process would.
 * The conformance kit uses it to test expiry; it is not for production code.
 */
export const simulateCrash: unique symbol = Symbol.for('muster.testing.simulateCrash') as never;

export function createLock(backend: LockBackend, options: { timing?: Partial<LockTiming>; clock?: Clock } = {}): Lock {
  return new LockClient(backend, { ...defaultLockTiming, ...options.timing }, options.clock ?? systemClock);
}

class LockClient implements Lock {
  readonly #backend: LockBackend;
  readonly #timing: LockTiming;
  readonly #clock: Clock;
  readonly #held = new Set<HeldLease>();
  readonly #closing = new AbortController();

  constructor(backend: LockBackend, timing: LockTiming, clock: Clock) {
    this.#backend = backend;
    this.#timing = timing;
    this.#clock = clock;
  }

  #ttl(options: AcquireOptions | undefined): number {
    const ttl = options?.ttl ?? this.#timing.defaultTtl;
    if (!Number.isFinite(ttl) || ttl < this.#timing.minTtl) {
      throw new InvalidArgumentError(`ttl ${ttl} ms is below this adapter's minimum of ${this.#timing.minTtl} ms`);
    }
    return ttl;
  }

  async tryAcquire(name: string, options?: Omit<AcquireOptions, 'wait'>): Promise<Lease | undefined> {
    this.#checkOpen();
    const ttl = this.#ttl(options);
    const signal = anySignal(options?.signal, this.#closing.signal);
    if (signal.aborted) throw abortErrorFrom(signal, `acquiring lock '${name}'`);
    const started = this.#clock.now();
    const grant = await this.#backend.tryAcquire(name, { ttl, signal });
    if (!grant) return undefined;
    return this.#keep(name, ttl, grant, started);
  }

  async acquire(name: string, options?: AcquireOptions): Promise<Lease> {
    this.#checkOpen();
    const ttl = this.#ttl(options);
    const wait = options?.wait;
    const deadline = wait === undefined ? Infinity : this.#clock.now() + wait;
    const signal = anySignal(options?.signal, this.#closing.signal);
    const retry = Math.max(10, ttl * this.#timing.retryRatio);
    for (let attempt = 0; ;) {
      if (signal.aborted) throw abortErrorFrom(signal, `acquiring lock '${name}'`);
      const started = this.#clock.now();
      let pause = retry;
      try {
        const grant = await this.#backend.tryAcquire(name, { ttl, signal });
        if (grant) return this.#keep(name, ttl, grant, started);
        attempt = 0;
      } catch (error) {
        if (signal.aborted) throw abortErrorFrom(signal, `acquiring lock '${name}'`);
        if (!isTransient(error)) throw error;
        pause = backoffDelay(attempt++, retry, Math.max(retry, 30_000));
      }
      const left = deadline - this.#clock.now();
      if (left <= 0) throw new TimeoutError(`lock '${name}' not acquired within ${wait} ms; another holder has it`);
      const maxWaitMs = Math.min(pause, left);
      if (this.#backend.waitForChange && pause === retry) {
        await this.#backend.waitForChange(name, { signal, maxWaitMs }).catch((error: unknown) => {
          if (signal.aborted) throw abortErrorFrom(signal, `acquiring lock '${name}'`);
          if (!isTransient(error)) throw error;
          return sleep(maxWaitMs, signal);
        });
      } else {
        await sleep(maxWaitMs, signal);
      }
    }
  }

  async withLock<T>(name: string, fn: (lease: Lease) => Promise<T>, options?: AcquireOptions): Promise<T> {
    const lease = await this.acquire(name, options);
    try {
      return await fn(lease);
    } finally {
      await lease.release();
    }
  }

  async close(): Promise<void> {
    if (this.#closing.signal.aborted) return;
    this.#closing.abort(new ClosedError('the lock client'));
    await Promise.allSettled([...this.#held].map((lease) => lease.release()));
    await this.#backend.close?.();
  }

  [simulateCrash](): void {
    for (const lease of this.#held) lease.abandon();
    this.#held.clear();
    this.#closing.abort(new ClosedError('the lock client (crashed)'));
  }

  #checkOpen(): void {
    if (this.#closing.signal.aborted) throw new ClosedError('the lock client');
  }

  #keep(name: string, ttl: number, grant: LeaseGrant, started: number): Lease {
    const lease = new HeldLease(name, ttl, grant, started, {
      backend: this.#backend,
      timing: this.#timing,
      clock: this.#clock,
      forget: (l) => this.#held.delete(l),
    });
    this.#held.add(lease);
    return lease;
  }
}

interface KeeperDeps {
  readonly backend: LockBackend;
  readonly timing: LockTiming;
  readonly clock: Clock;
  readonly forget: (lease: HeldLease) => void;
}

/**
 * One held lease and its renewal loop. Expiry is judged on the local clock from the moment the
 * acquiring or renewing request was *sent*, so a slow answer can only make us give up early.
 */
class HeldLease implements Lease {
  readonly name: string;
  readonly holder: string;
  readonly token: bigint;
  readonly #ttl: number;
  readonly #deps: KeeperDeps;
  readonly #lost = new AbortController();
  #grant: LeaseGrant;
  #confirmedAt: number;
  #timer: NodeJS.Timeout | undefined;
  #renewing: Promise<void> | undefined;
  #released: Promise<void> | undefined;

  constructor(name: string, ttl: number, grant: LeaseGrant, confirmedAt: number, deps: KeeperDeps) {
    this.name = name;
    this.holder = deps.backend.holder;
    this.token = grant.token;
    this.#ttl = ttl;
    this.#grant = grant;
    this.#confirmedAt = confirmedAt;
    this.#deps = deps;
    this.#schedule(this.#renewInterval);
  }

  get expiresAt(): number {
    return this.#confirmedAt + this.#ttl;
  }

  get onLost(): AbortSignal {
    return this.#lost.signal;
  }

  get #renewDeadline(): number {
    return this.#ttl * this.#deps.timing.renewDeadlineRatio;
  }

  get #renewInterval(): number {
    return Math.max(10, this.#ttl / 3);
  }

  #schedule(delay: number): void {
    clearTimeout(this.#timer);
    // Renewal must not keep an otherwise finished process alive.
    this.#timer = setTimeout(() => void this.#renewInBackground(), delay).unref();
  }

  async #renewInBackground(): Promise<void> {
    try {
      await this.renew();
    } catch {
      // renew() has already decided whether this failure loses the lease.
    }
  }

  renew(): Promise<void> {
    if (this.#lost.signal.aborted) {
      return Promise.reject(new LockLostError(this.name, 'the lease was already lost or released', { cause: this.#lost.signal.reason }));
    }
    this.#renewing ??= this.#renewOnce().finally(() => {
      this.#renewing = undefined;
    });
    return this.#renewing;
  }

  async #renewOnce(): Promise<void> {
    const { backend, clock, timing } = this.#deps;
    const started = clock.now();
    const giveUpAt = this.#confirmedAt + this.#renewDeadline;
    const timeout = Math.max(1, Math.min(this.#renewDeadline / 2, giveUpAt - started));
    const deadline = timeoutSignal(timeout);
    try {
      this.#grant = await backend.renew(this.name, this.#grant, {
        ttl: this.#ttl,
        signal: anySignal(deadline.signal, this.#lost.signal),
      });
      if (this.#lost.signal.aborted) return;
      this.#confirmedAt = started;
      this.#schedule(this.#renewInterval);
    } catch (error) {
      if (this.#lost.signal.aborted) throw error;
      const now = clock.now();
      const reported = error instanceof LockLostError || MusterError.is(error, 'MUSTER_LOCK_LOST');
      if (reported || now >= giveUpAt) {
        const lost = reported
          ? (error as LockLostError)
          : new LockLostError(this.name, `renewal failed for longer than the renew deadline (${Math.round(this.#renewDeadline)} ms)`, {
              cause: error,
            });
        this.#lose(lost);
        throw lost;
      }
      this.#schedule(Math.min(Math.max(10, this.#ttl * timing.retryRatio), giveUpAt - now));
      throw error;
    } finally {
      deadline.clear();
    }
  }

  #lose(reason: MusterError): void {
    clearTimeout(this.#timer);
    this.#deps.forget(this);
    this.#lost.abort(reason);
  }

  /** Stops renewing without telling the backend (simulated crash). */
  abandon(): void {
    clearTimeout(this.#timer);
    this.#released = Promise.resolve();
    this.#deps.forget(this);
  }

  release(): Promise<void> {
    this.#released ??= this.#releaseOnce();
    return this.#released;
  }

  async #releaseOnce(): Promise<void> {
    const wasLost = this.#lost.signal.aborted;
    await this.#renewing?.catch(() => undefined);
    this.#lose(new LockLostError(this.name, 'released by its holder'));
    if (wasLost) return;
    const deadline = timeoutSignal(Math.max(1000, this.#renewDeadline));
    try {
      await this.#deps.backend.release(this.name, this.#grant, { signal: deadline.signal });
    } finally {
      deadline.clear();
    }
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.release();
  }
}
