import { abortable } from '../abort.js';
import type { Clock } from '../clock.js';
import { LockLostError, MusterError, TimeoutError } from '../errors.js';
import type { Lease } from '../ports/lock.js';
import type { LeaseGrant, LockBackend } from './lock-client.js';
import { isTransient } from './transient.js';

/** The three durations of client-go's elector, derived from one lease's ttl. */
export interface RenewalSchedule {
  /** Lease duration (ms). */
  readonly ttl: number;
  /** How long a renewal cycle may take, from when it was due, before the holder gives up (ms). */
  readonly renewDeadline: number;
  /** Pause between renewals, and between the attempts of a failing renewal (ms). */
  readonly retryPeriod: number;
}

export interface HeldLeaseDeps {
  readonly backend: LockBackend;
  readonly clock: Clock;
  readonly forget: (lease: HeldLease) => void;
  /** Work that outlives the lease's own calls (a give-back after a give-up): close() waits for it. */
  readonly background: (work: Promise<void>) => void;
}

/** AbortSignal's own `aborted`, which HeldLease's signal shadows with one that judges the clock first. */
const abortedGetter = Object.getOwnPropertyDescriptor(AbortSignal.prototype, 'aborted')!.get as (this: AbortSignal) => boolean;

/** Resolves with the promise's outcome, or rejects with TimeoutError after `ms` if it has not settled. */
export async function settleWithin<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutError(`${what}: no answer within ${Math.round(ms)} ms`)), Math.ceil(ms));
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * One held lease and its renewal loop, on client-go's schedule: renew every retry period; a
 * renewal cycle that has not succeeded within the renew deadline of when it was due gives the
 * lease up. Two bounds keep the holder safe whatever the backend does:
 *
 * - `expiresAt` counts from when the last successful acquire or renewal was *sent*: the backend
 *   cannot have started its ttl earlier, so a slow answer only shortens our belief.
 * - the give-up point is never later than `expiresAt`, and a timer fires `onLost` there even when
 *   a backend call never settles or ignores its signal.
 */
export class HeldLease implements Lease {
  readonly name: string;
  readonly holder: string;
  readonly token: bigint;
  readonly #schedule: RenewalSchedule;
  readonly #deps: HeldLeaseDeps;
  readonly #lost = new AbortController();
  #grant: LeaseGrant;
  /** Local time the last successful acquire or renewal was sent. */
  #sentAt = 0;
  /** Local time at which, without a successful renewal, the holder gives the lease up. */
  #giveUpAt = 0;
  #renewTimer: NodeJS.Timeout | undefined;
  #giveUpTimer: NodeJS.Timeout | undefined;
  #renewing: Promise<void> | undefined;
  #released: Promise<void> | undefined;
  #abandoned = false;

  constructor(name: string, grant: LeaseGrant, sentAt: number, schedule: RenewalSchedule, deps: HeldLeaseDeps) {
    this.name = name;
    this.holder = deps.backend.holder;
    this.token = grant.token;
    this.#grant = grant;
    this.#schedule = schedule;
    this.#deps = deps;
    this.#confirmed(sentAt);
    this.#judgeOnRead(this.#lost.signal);
  }

  /**
   * Makes the signal itself judge the clock when read, as the `onLost` getter does: a holder keeps
   * it or hands it to its work (`const { onLost } = lease`), and after a pause past the give-up
   * point (SIGSTOP, a long GC, a blocked event loop) the first code to run may be that work, before
   * the overdue timer. It must read `aborted` true and have `throwIfAborted()` throw there. (Node's
   * own consumers, and signals derived with AbortSignal.any, see the abort when the timer fires.)
   */
  #judgeOnRead(signal: AbortSignal): void {
    Object.defineProperties(signal, {
      aborted: {
        get: () => {
          this.#giveUpIfDue();
          return abortedGetter.call(signal);
        },
      },
      throwIfAborted: {
        value: () => {
          this.#giveUpIfDue();
          AbortSignal.prototype.throwIfAborted.call(signal);
        },
      },
    });
  }

  get expiresAt(): number {
    return this.#sentAt + this.#schedule.ttl;
  }

  get onLost(): AbortSignal {
    // Reading the signal judges the clock too, so `onLost.aborted` is right even if the event loop
    // was too busy to run the give-up timer on time.
    this.#giveUpIfDue();
    return this.#lost.signal;
  }

  /** A renewal (or the acquire) sent at `sentAt` succeeded: extend the belief and plan the next cycle. */
  #confirmed(sentAt: number): void {
    const { ttl, renewDeadline, retryPeriod } = this.#schedule;
    this.#sentAt = sentAt;
    // 1 ms before expiresAt at the latest: setTimeout works in whole milliseconds and may round up.
    this.#giveUpAt = Math.min(this.#deps.clock.now() + retryPeriod + renewDeadline, sentAt + ttl - 1);
    this.#renewAfter(retryPeriod);
    this.#armGiveUp();
  }

  #renewAfter(delay: number): void {
    clearTimeout(this.#renewTimer);
    // Renewal must not keep an otherwise finished process alive.
    this.#renewTimer = setTimeout(() => void this.#renewInBackground(), delay).unref();
  }

  #armGiveUp(): void {
    clearTimeout(this.#giveUpTimer);
    const left = this.#giveUpAt - this.#deps.clock.now();
    this.#giveUpTimer = setTimeout(() => this.#giveUpIfDue(true), Math.max(0, Math.ceil(left))).unref();
  }

  #giveUpIfDue(fromTimer = false): void {
    // An abandoned lease stands for a crashed or frozen process: nothing in it runs any more.
    if (abortedGetter.call(this.#lost.signal) || this.#abandoned) return;
    if (this.#deps.clock.now() < this.#giveUpAt) {
      if (fromTimer) this.#armGiveUp();
      return;
    }
    const { renewDeadline } = this.#schedule;
    this.#lose(
      new LockLostError(
        this.name,
        `no renewal succeeded within the renew deadline (${Math.round(renewDeadline)} ms) or before the lease's expiry; another holder may take it now`,
      ),
    );
    // A renewal the backend applied after all (its answer late or lost) would keep the next holder
    // out for up to a ttl: give the lease back there, in the background. The backend releases only
    // what is still this grant's, so a lease another holder took meanwhile is left alone.
    this.#deps.background(this.#giveBack());
  }

  async #giveBack(): Promise<void> {
    this.#released ??= Promise.resolve();
    await this.#renewalSettled();
    // Unreachable, most likely (why the renewals failed): the lease lapses by its ttl.
    await this.#releaseAtBackend(`giving back lock '${this.name}'`).catch(() => undefined);
  }

  /** How long a release may wait for a renewal in flight, and then for the backend. */
  get #releaseLimit(): number {
    return Math.max(1000, this.#schedule.renewDeadline);
  }

  /**
   * A renewal in flight may carry state the release needs (a new resourceVersion): waits for it,
   * but not for ever: a backend call that never settles must not hang release() or close().
   */
  async #renewalSettled(): Promise<void> {
    await settleWithin(this.#renewing ?? Promise.resolve(), this.#releaseLimit, 'renewal').catch(() => undefined);
  }

  /** The backend's release of the current grant, bounded as {@link #renewalSettled} is. */
  async #releaseAtBackend(what: string): Promise<void> {
    const limit = this.#releaseLimit;
    const controller = new AbortController();
    try {
      await settleWithin(this.#deps.backend.release(this.name, this.#grant, { signal: controller.signal }), limit, what);
    } finally {
      controller.abort(new TimeoutError(`${what} took longer than ${Math.round(limit)} ms`));
    }
  }

  async #renewInBackground(): Promise<void> {
    try {
      await this.renew();
    } catch {
      // renew() has already decided whether this failure loses the lease.
    }
  }

  renew(): Promise<void> {
    this.#giveUpIfDue();
    if (this.#lost.signal.aborted) {
      return Promise.reject(new LockLostError(this.name, 'the lease was already lost or released', { cause: this.#lost.signal.reason }));
    }
    this.#renewing ??= this.#renewOnce().finally(() => {
      this.#renewing = undefined;
    });
    return this.#renewing;
  }

  async #renewOnce(): Promise<void> {
    const { backend, clock } = this.#deps;
    const sentAt = clock.now();
    let grant: LeaseGrant;
    try {
      // No timeout of its own: the give-up timer aborts the signal, so a renewal may take as long
      // as the renew deadline allows (client-go keeps a leader through any such renewal).
      // A signal per call: an adapter that leaves a listener on it must not pile them onto one
      // signal that lives as long as the lease.
      // Raced with onLost too: a call that ignores its signal must not hold renew() past the give-up point.
      const signal = AbortSignal.any([this.#lost.signal]);
      grant = await abortable(backend.renew(this.name, this.#grant, { ttl: this.#schedule.ttl, signal }), signal);
    } catch (error) {
      if (this.#lost.signal.aborted) throw this.#lostError(error);
      if (error instanceof LockLostError || MusterError.is(error, 'MUSTER_LOCK_LOST')) {
        this.#lose(error as MusterError);
        throw error;
      }
      if (!isTransient(error)) {
        const lost = new LockLostError(
          this.name,
          `renewal failed with an error retrying cannot fix: ${(error as Error)?.message ?? String(error)}`,
          {
            cause: error,
          },
        );
        this.#lose(lost);
        throw lost;
      }
      const next = clock.now() + this.#schedule.retryPeriod;
      // Past the give-up point the timer ends the lease; another attempt could not land in time.
      if (next < this.#giveUpAt) this.#renewAfter(this.#schedule.retryPeriod);
      throw error;
    }
    if (this.#lost.signal.aborted) throw this.#lostError();
    this.#grant = grant;
    this.#confirmed(sentAt);
  }

  #lostError(cause?: unknown): LockLostError {
    const reason: unknown = this.#lost.signal.reason;
    if (reason instanceof LockLostError && cause === undefined) return reason;
    return new LockLostError(this.name, (reason as Error)?.message ?? 'the lease was lost', { cause: cause ?? reason });
  }

  #lose(reason: MusterError): void {
    clearTimeout(this.#renewTimer);
    clearTimeout(this.#giveUpTimer);
    this.#deps.forget(this);
    this.#lost.abort(reason);
  }

  /** Stops renewing without telling the backend (simulated crash). */
  abandon(): void {
    this.#abandoned = true;
    clearTimeout(this.#renewTimer);
    clearTimeout(this.#giveUpTimer);
    this.#released = Promise.resolve();
    this.#deps.forget(this);
  }

  release(): Promise<void> {
    this.#released ??= this.#releaseOnce();
    return this.#released;
  }

  async #releaseOnce(): Promise<void> {
    this.#giveUpIfDue();
    const wasLost = this.#lost.signal.aborted;
    await this.#renewalSettled();
    this.#lose(new LockLostError(this.name, 'released by its holder'));
    if (wasLost) return;
    await this.#releaseAtBackend(`releasing lock '${this.name}'`);
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.release();
  }
}
