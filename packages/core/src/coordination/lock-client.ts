import { abortable, backoffDelay, sleep } from '../abort.js';
import { systemClock, type Clock } from '../clock.js';
import { abortErrorFrom, ClosedError, InvalidArgumentError, TimeoutError } from '../errors.js';
import type { AcquireOptions, Lease, Lock, WithLockOptions } from '../ports/lock.js';
import { HeldLease, settleWithin, type RenewalSchedule } from './held-lease.js';
import { isTransient } from './transient.js';

/** The least time one acquire attempt gets to answer, however short its wait (less when the ttl is shorter). */
const MIN_ATTEMPT_MS = 1000;

/** What the backend confirmed for one acquire or renewal. */
export interface LeaseGrant {
  /** The fencing token: strictly increases each time the lock changes hands. */
  readonly token: bigint;
  /** Backend-specific state the next renew or release needs (resourceVersion, session id). */
  readonly state?: unknown;
}

export interface BackendCallOptions {
  readonly ttl: number;
  /**
   * Aborts the call: when the caller gives up, and for a renewal at the lease's give-up point.
   * Honour it; the client fires onLost at that point whether the call settles or not.
   */
  readonly signal: AbortSignal;
}

/**
 * The small surface a lock adapter implements; `createLock` builds the Lock port on it (waiting,
 * background renewal, renew deadline, onLost, withLock), so every adapter behaves the same.
 *
 * Errors: only those `isTransient()` accepts (BackendError without a status or with 409/429/5xx,
 * TimeoutError, Node's network errors) are retried. Wrap an unreachable or overloaded backend in
 * one of them; anything else rejects acquire at once and ends a held lease, as a bug should.
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
  /** Share of the ttl between renewals, and between retries of acquire and of a failed renewal (client-go: 2 s of 15 s). */
  readonly retryRatio: number;
}

export const defaultLockTiming: LockTiming = {
  defaultTtl: 15_000,
  minTtl: 100,
  renewDeadlineRatio: 2 / 3,
  retryRatio: 2 / 15,
};

/**
 * Test hook: stops a client's renewals without releasing anything, as a crashed process would.
 * Its leases freeze entirely, give-up timer and expiry judgement included, so a test can also play
 * a paused holder that still believes it holds the lock (only fencing stops it then). The
 * conformance kit uses it to test expiry; it is not for production code.
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
  /** Leases given back after a give-up, still under way. */
  readonly #givingBack = new Set<Promise<void>>();
  /** Backend attempts in flight, with when a grant they bring would lapse anyway (see close()). */
  readonly #attempts = new Set<{ readonly settled: Promise<unknown>; readonly lapsesAt: number }>();
  readonly #closing = new AbortController();
  #crashed = false;

  constructor(backend: LockBackend, timing: LockTiming, clock: Clock) {
    this.#backend = backend;
    this.#timing = timing;
    this.#clock = clock;
  }

  #schedule(options: AcquireOptions | undefined): RenewalSchedule {
    const ttl = options?.ttl ?? this.#timing.defaultTtl;
    if (!Number.isFinite(ttl) || ttl < this.#timing.minTtl) {
      throw new InvalidArgumentError(`ttl ${ttl} ms is below this adapter's minimum of ${this.#timing.minTtl} ms`);
    }
    return { ttl, renewDeadline: ttl * this.#timing.renewDeadlineRatio, retryPeriod: Math.max(10, ttl * this.#timing.retryRatio) };
  }

  async tryAcquire(name: string, options?: Omit<AcquireOptions, 'wait'>): Promise<Lease | undefined> {
    this.#checkOpen();
    const schedule = this.#schedule(options);
    const signal = this.#callSignal(options?.signal);
    if (signal.aborted) throw abortErrorFrom(signal, `acquiring lock '${name}'`);
    const lease = await this.#attempt(name, schedule, signal);
    return lease === 'late' ? undefined : lease;
  }

  async acquire(name: string, options?: AcquireOptions): Promise<Lease> {
    this.#checkOpen();
    const schedule = this.#schedule(options);
    const { retryPeriod: retry } = schedule;
    const wait = options?.wait;
    // NaN (or a negative wait) compares false with every deadline: it would wait for ever.
    if (wait !== undefined && (Number.isNaN(wait) || wait < 0)) {
      throw new InvalidArgumentError(`acquire(): wait must be a number of ms, 0 or more (or left out to wait until acquired); got ${wait}`);
    }
    const deadline = wait === undefined ? Infinity : this.#clock.now() + wait;
    const signal = this.#callSignal(options?.signal);
    let lastError: unknown;
    for (let attempt = 0; ;) {
      if (signal.aborted) throw abortErrorFrom(signal, `acquiring lock '${name}'`);
      let pause = retry;
      try {
        const lease = await this.#attempt(name, schedule, signal, deadline);
        if (lease === 'late') throw this.#timedOut(name, wait, lastError);
        if (lease) return lease;
        attempt = 0;
        lastError = undefined;
      } catch (error) {
        if (signal.aborted) throw abortErrorFrom(signal, `acquiring lock '${name}'`);
        if (!isTransient(error)) throw error;
        lastError = error;
        pause = backoffDelay(attempt++, retry, Math.max(retry, 30_000));
      }
      const left = deadline - this.#clock.now();
      if (left <= 0) throw this.#timedOut(name, wait, lastError);
      const maxWaitMs = Math.min(pause, left);
      if (this.#backend.waitForChange && pause === retry) {
        await abortable(this.#backend.waitForChange(name, { signal, maxWaitMs }), signal).catch((error: unknown) => {
          if (signal.aborted) throw abortErrorFrom(signal, `acquiring lock '${name}'`);
          if (!isTransient(error)) throw error;
          lastError = error;
          return sleep(maxWaitMs, signal);
        });
      } else {
        await sleep(maxWaitMs, signal);
      }
    }
  }

  #timedOut(name: string, wait: number | undefined, lastError: unknown): TimeoutError {
    if (lastError === undefined) return new TimeoutError(`lock '${name}' not acquired within ${wait} ms; another holder has it`);
    const why = (lastError as Error)?.message ?? String(lastError);
    return new TimeoutError(`lock '${name}' not acquired within ${wait} ms; the last attempt failed: ${why}`, { cause: lastError });
  }

  async withLock<T>(name: string, fn: (lease: Lease) => Promise<T>, options?: WithLockOptions): Promise<T> {
    const lease = await this.acquire(name, options);
    let outcome: { ok: true; value: T } | { ok: false; error: unknown };
    try {
      outcome = { ok: true, value: await fn(lease) };
    } catch (error) {
      outcome = { ok: false, error };
    }
    try {
      await lease.release();
    } catch (error) {
      // fn's outcome is what the caller asked for; a failed release only means the lease lingers
      // until its ttl, so it is reported beside that outcome, never instead of it.
      reportReleaseError(error, lease, outcome.ok, options?.onReleaseError);
    }
    if (!outcome.ok) throw outcome.error;
    return outcome.value;
  }

  async close(): Promise<void> {
    if (this.#closing.signal.aborted) return;
    this.#closing.abort(new ClosedError('the lock client'));
    await Promise.allSettled([...this.#held].map((lease) => lease.release()));
    await Promise.allSettled([...this.#givingBack]);
    // An attempt in flight may still bring a grant, which #keep gives back: the backend must stay
    // open for that release. Waiting past when such a grant would lapse by itself gains nothing.
    await Promise.allSettled(
      [...this.#attempts].map(({ settled, lapsesAt }) =>
        settleWithin(settled, Math.max(0, lapsesAt - this.#clock.now()), 'acquire in flight'),
      ),
    );
    await this.#backend.close?.();
  }

  [simulateCrash](): void {
    this.#crashed = true;
    for (const lease of this.#held) lease.abandon();
    this.#held.clear();
    this.#closing.abort(new ClosedError('the lock client (crashed)'));
  }

  /**
   * A signal of this call's own, even without a caller's signal: backends add abort listeners per
   * wait, and many concurrent acquires on the client's one closing signal would pile them up.
   */
  #callSignal(signal: AbortSignal | undefined): AbortSignal {
    return AbortSignal.any(signal ? [signal, this.#closing.signal] : [this.#closing.signal]);
  }

  #checkOpen(): void {
    if (this.#closing.signal.aborted) throw new ClosedError('the lock client');
  }

  /**
   * One backend attempt and what becomes of its grant, tracked until both settle (close() waits for
   * them). At `deadline` (acquire's `wait`, or a second after it was sent if that is later; less for
   * a ttl too short to keep a grant that late) it
   * answers 'late' without waiting for the backend: a call
   * that hangs (a paused server, a connection that swallows bytes) must not hold acquire past its
   * wait for the adapter's whole request timeout. The call is left running rather than aborted, so
   * that a grant it still brings is seen, and released, instead of lapsing unseen after its ttl.
   * An abort ends the attempt at once too, whether or not the call heeds its signal; a grant it
   * brings later is released by #keep, which finds the signal aborted.
   */
  async #attempt(name: string, schedule: RenewalSchedule, signal: AbortSignal, deadline = Infinity): Promise<Lease | undefined | 'late'> {
    const sentAt = this.#clock.now();
    let gaveUp = false;
    const run = this.#backend
      .tryAcquire(name, { ttl: schedule.ttl, signal })
      .then((grant) => grant && this.#keep(name, grant, sentAt, schedule, signal, () => gaveUp));
    const attempt = { settled: run.catch(() => undefined), lapsesAt: sentAt + schedule.ttl };
    this.#attempts.add(attempt);
    void attempt.settled.finally(() => this.#attempts.delete(attempt));
    const bounded = abortable(run, signal, `acquiring lock '${name}'`).catch((error: unknown) => {
      // An abort between #keep making the lease and this call seeing it: nobody will hold that lease.
      if (signal.aborted) void attempt.settled.then((lease) => lease?.release()).catch(() => undefined);
      throw error;
    });
    if (!Number.isFinite(deadline)) return bounded;
    let timer: NodeJS.Timeout | undefined;
    // An attempt gets a second (less for a ttl too short to keep a later grant) to answer however short the wait: `wait: 0`
    // (or one shorter than a round trip) still makes one whole attempt, instead of timing out before
    // any answer could come, and a hung backend still ends it soon after the wait.
    const answerBy = Math.max(deadline, sentAt + Math.min(schedule.ttl - schedule.retryPeriod, MIN_ATTEMPT_MS));
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), Math.max(0, Math.ceil(answerBy - this.#clock.now())));
    });
    try {
      const outcome = await Promise.race([bounded, late]);
      if (outcome === 'late') {
        gaveUp = true;
        // Normally #keep sees gaveUp and gives the grant back itself; a lease made just before is released here.
        void attempt.settled.then((lease) => lease?.release()).catch(() => undefined);
      }
      return outcome;
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * A lease for a grant, or undefined when the attempt took so long that less than a retry period of
   * the lease is left: that grant is released (best effort, bounded) rather than handed out. Such a
   * lease would lapse before its first renewal could land, and one paused thread (a descheduled
   * process on a loaded machine) between this check and the caller would hand out one already
   * expired; with the margin, that takes a pause longer than a retry period (ttl × 2/15). A grant
   * that lands after the caller aborted or the client closed (the backend took the lock before the
   * abort reached it) is released too: nobody would hold that lease, yet it would renew itself and
   * keep every other contender out.
   */
  async #keep(
    name: string,
    grant: LeaseGrant,
    sentAt: number,
    schedule: RenewalSchedule,
    signal: AbortSignal,
    gaveUp: () => boolean,
  ): Promise<Lease | undefined> {
    const unwanted = signal.aborted;
    // A crashed process gives nothing back: its grant lapses after the ttl, as the test hook promises.
    if (unwanted && this.#crashed) throw abortErrorFrom(signal, `acquiring lock '${name}'`);
    if (unwanted || gaveUp() || this.#clock.now() > sentAt + schedule.ttl - schedule.retryPeriod) {
      const controller = new AbortController();
      await settleWithin(
        this.#backend.release(name, grant, { signal: controller.signal }),
        Math.max(1000, schedule.renewDeadline),
        'release',
      )
        .catch((error: unknown) => {
          process.emitWarning(
            `lock '${name}': a grant that came too late could not be given back; it lapses after its ttl: ${(error as Error)?.message ?? String(error)}`,
            { type: 'MusterWarning', code: 'MUSTER_RELEASE_FAILED' },
          );
        })
        .finally(() => controller.abort());
      if (unwanted) throw abortErrorFrom(signal, `acquiring lock '${name}'`);
      return undefined;
    }
    const lease = new HeldLease(name, grant, sentAt, schedule, {
      backend: this.#backend,
      clock: this.#clock,
      forget: (l) => this.#held.delete(l),
      background: (work) => {
        this.#givingBack.add(work);
        void work.finally(() => this.#givingBack.delete(work));
      },
    });
    this.#held.add(lease);
    return lease;
  }
}

function reportReleaseError(error: unknown, lease: Lease, fnSucceeded: boolean, hook: WithLockOptions['onReleaseError']): void {
  if (hook) {
    try {
      hook(error, lease);
      return;
    } catch (hookError) {
      error = new AggregateError([error, hookError], 'onReleaseError threw while handling a failed release');
    }
  }
  process.emitWarning(
    `withLock('${lease.name}'): release failed after the function ${fnSucceeded ? 'succeeded' : 'failed'}; the lease stays until its ttl passes: ${(error as Error)?.message ?? String(error)}`,
    { type: 'MusterWarning', code: 'MUSTER_RELEASE_FAILED' },
  );
}
