import type { ServiceIdentifier } from 'inversify';

export interface AcquireOptions {
  /** How long the lease lasts without renewal, in ms. Adapters state their default and minimum. */
  readonly ttl?: number;
  /** How long to wait for the lock, in ms; undefined waits until acquired or aborted. */
  readonly wait?: number;
  readonly signal?: AbortSignal;
}

/**
 * A held lock. It renews itself in the background until released.
 *
 * `token` is the fencing token: it strictly increases each time the lock changes hands (kept in
 * the backend, so it orders holders across processes). Pass it to the resource the lock
 * protects and have that resource reject writes carrying a smaller token than it has seen. Each
 * adapter states whether the order survives deletion of the lock object and loss of the backend's
 * data, and on what condition (Kubernetes and Consul: the acquirers' wall clocks; see their READMEs).
 */
export interface Lease extends AsyncDisposable {
  readonly name: string;
  readonly holder: string;
  readonly token: bigint;
  /** Local time (ms) after which this holder must assume the lease is gone. */
  readonly expiresAt: number;
  /**
   * Fires as soon as the holder can no longer be sure it holds the lock: renewal failed past the
   * renew deadline, the backend reports another holder, the session was invalidated, or the lease
   * was released. Stop the protected work when it fires.
   */
  readonly onLost: AbortSignal;
  /** Renews now; throws LockLostError once `onLost` has fired. */
  renew(): Promise<void>;
  /** Gives the lock up so the next contender need not wait out the ttl; idempotent. */
  release(): Promise<void>;
}

/**
 * Lock: leases with fencing tokens.
 *
 * Guarantee: at most one holder at a time while clocks run at rates that differ by less than the
 * adapter's margin (ttl versus renew deadline) and no holder pauses for longer than that margin.
 *
 * Not guaranteed: mutual exclusion under arbitrary process pauses, clock jumps or partitions. No
 * lease lock can promise that. The fencing token is what protects the resource then: a paused
 * holder that wakes up carries an older token, and the resource rejects it.
 */
export interface Lock {
  /** Waits until the lock is held; TimeoutError after `wait`, AbortError when `signal` fires. */
  acquire(name: string, options?: AcquireOptions): Promise<Lease>;
  /** One attempt; undefined when another holder has it. */
  tryAcquire(name: string, options?: Omit<AcquireOptions, 'wait'>): Promise<Lease | undefined>;
  /** Acquires, runs `fn` with the lease, and always releases. `fn` should stop when `lease.onLost` fires. */
  withLock<T>(name: string, fn: (lease: Lease) => Promise<T>, options?: AcquireOptions): Promise<T>;
  /** Releases every lease this client holds; idempotent. */
  close(): Promise<void>;
}

export const LockId: ServiceIdentifier<Lock> = Symbol.for('muster.Lock');
