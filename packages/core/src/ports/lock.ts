export interface AcquireOptions {
  /** How long the lease lasts without renewal, in ms. Adapters state their default and minimum. */
  readonly ttl?: number;
  /**
   * How long to wait for the lock, in ms; undefined waits until acquired or aborted. A wait shorter
   * than one attempt (`0`) still makes that attempt whole: a free lock is taken, and a backend that
   * does not answer ends it one second after it was sent (less for a ttl under about 1.2 s).
   */
  readonly wait?: number;
  readonly signal?: AbortSignal;
}

export interface WithLockOptions extends AcquireOptions {
  /**
   * Called when releasing the lease after `fn` fails. withLock still returns `fn`'s value or
   * throws `fn`'s error unchanged; the unreleased lease lapses after its ttl. Without this hook
   * the failure is emitted as a process warning (type `MusterWarning`, code
   * `MUSTER_RELEASE_FAILED`).
   */
  readonly onReleaseError?: (error: unknown, lease: Lease) => void;
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
  /**
   * When this holder must assume the lease is gone, on the lock client's clock: `systemClock.now()`
   * (monotonic, ms; near `Date.now()` but immune to wall-clock steps), or the Clock passed to
   * `createLock`. Compare it with that clock, never with `Date.now()`. It counts from when the last
   * successful acquire or renewal was *sent* (the backend cannot have started the ttl earlier) and
   * moves forward with every renewal. When acquire/tryAcquire return, at least a retry period (ttl × 2/15
   * by default) is left: a grant that comes back later than that is released and does not count.
   */
  readonly expiresAt: number;
  /**
   * Fires as soon as the holder can no longer be sure it holds the lock: no renewal succeeded
   * within the renew deadline, the backend reports another holder, the session was invalidated, a
   * renewal failed with an error retrying cannot fix, or the lease was released. It fires no later
   * than `expiresAt`, from a timer, even when a backend call never settles; reading
   * `onLost.aborted` (or calling `throwIfAborted()`) at or after `expiresAt` is always true (throws),
   * also on the signal kept from an earlier read and handed to the work, before the timer has run
   * after a pause. Signals derived from it (`AbortSignal.any`) and Node's own consumers see the
   * abort when the timer runs. Stop the protected work when it fires.
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
 * Renewal follows client-go's leader election: a holder renews every retry period (ttl × 2/15 by
 * default) and keeps the lease through any renewal cycle that succeeds within the renew deadline
 * (ttl × 2/3) of when it was due; it gives up at that deadline or at `expiresAt`, whichever comes
 * first. Durations are judged on a monotonic clock, so stepping the wall clock changes nothing.
 *
 * Guarantee: a holder gives the lease up (`onLost`) no later than ttl after it *sent* its last
 * successful renewal, and another contender can take it only a ttl after it *observed* that
 * renewal, which came later. So there is at most one holder at a time while the clock rates of
 * holder and contender differ by less than that gap and no holder pauses (GC, SIGSTOP, a blocked
 * event loop) between checking `onLost` and acting. Errors that retrying cannot fix (a TypeError,
 * a permission error) surface as themselves from acquire and lose a held lease at once.
 *
 * Not guaranteed: mutual exclusion under arbitrary process pauses or partitions. No lease lock
 * can promise that. The fencing token is what protects the resource then: a paused holder that
 * wakes up carries an older token, and the resource rejects it. How each adapter keeps its token
 * ordered when the lock object is deleted or the backend loses its data is stated in the
 * adapter's own documentation (README, "What a lock guarantees").
 */
export interface Lock {
  /**
   * Waits until the lock is held; TimeoutError after `wait` (with the last attempt's error as
   * `cause` when attempts were failing), even while a backend call hangs (a grant that call still
   * brings is released), AbortError when `signal` fires. Backend errors known to
   * be transient are retried with backoff; any other error rejects at once, as itself.
   */
  acquire(name: string, options?: AcquireOptions): Promise<Lease>;
  /** One attempt; undefined when another holder has it (or our grant came back too late to hand out, see `expiresAt`). */
  tryAcquire(name: string, options?: Omit<AcquireOptions, 'wait'>): Promise<Lease | undefined>;
  /**
   * Acquires, runs `fn` with the lease, and always releases. Returns `fn`'s value or throws its
   * error unchanged, even when the release fails (see `onReleaseError`). `fn` should stop when
   * `lease.onLost` fires.
   */
  withLock<T>(name: string, fn: (lease: Lease) => Promise<T>, options?: WithLockOptions): Promise<T>;
  /** Releases every lease this client holds; idempotent. */
  close(): Promise<void>;
}
