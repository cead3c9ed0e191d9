import { AsyncLocalStorage } from 'node:async_hooks';
import { anySignal, sleep } from '../abort.js';
import { ClosedError, LockLostError, MusterError } from '../errors.js';
import type { Lease, Lock } from '../ports/lock.js';

export interface LeaderElectorOptions {
  /** Lease duration in ms (client-go's leaseDuration); the lock adapter's default when omitted. */
  readonly ttl?: number;
  /** Pause after losing leadership before campaigning again, in ms (default 0). */
  readonly cooldown?: number;
  readonly signal?: AbortSignal;
}

type Elected = (lease: Lease) => void | Promise<void>;
/** The elector whose listener is running in this async context, if any. */
const insideListener = new AsyncLocalStorage<LeaderElector>();
type Demoted = (reason: unknown) => void | Promise<void>;

/**
 * Leader election on the Lock port: campaign until elected, hold leadership while the lease
 * renews, report demotion the moment the lease is lost, and campaign again.
 *
 * Guarantees what the Lock guarantees and no more: while clocks and pauses stay within the lock's
 * margin there is at most one leader; beyond it two processes may both believe they lead for a
 * moment. Stop leader work in `onDemoted` (or on `lease.onLost`) and pass `lease.token` to what
 * the leader writes, so a stale leader's writes are rejected.
 */
export class LeaderElector implements AsyncDisposable {
  readonly name: string;
  readonly #lock: Lock;
  readonly #options: LeaderElectorOptions;
  readonly #elected = new Set<Elected>();
  readonly #demoted = new Set<Demoted>();
  readonly #stop = new AbortController();
  #lease: Lease | undefined;
  #running: Promise<void> | undefined;

  constructor(lock: Lock, name: string, options: LeaderElectorOptions = {}) {
    this.#lock = lock;
    this.name = name;
    this.#options = options;
  }

  get isLeader(): boolean {
    return this.#lease !== undefined && !this.#lease.onLost.aborted;
  }

  /** The current lease while leading. */
  get lease(): Lease | undefined {
    return this.isLeader ? this.#lease : undefined;
  }

  /**
   * Called when a term starts. A listener may run the leader's work for the whole term: demotion is
   * reported (onDemoted) as the lease is lost even while it runs, and the next campaign waits for it.
   * A listener that throws (or rejects) ends the term as a crash would: onDemoted is told the error,
   * the lease is given up, and campaigning goes on after the cooldown.
   */
  onElected(listener: Elected): () => void {
    this.#elected.add(listener);
    return () => this.#elected.delete(listener);
  }

  onDemoted(listener: Demoted): () => void {
    this.#demoted.add(listener);
    return () => this.#demoted.delete(listener);
  }

  /**
   * Starts campaigning (once; later calls return the same promise). The promise settles when
   * campaigning ends: it resolves after resign()/close() or an abort of the options' signal, and
   * rejects on an error that retrying cannot fix (e.g. permission denied).
   */
  campaign(): Promise<void> {
    this.#running ??= this.#loop();
    return this.#running;
  }

  async #loop(): Promise<void> {
    const signal = anySignal(this.#options.signal, this.#stop.signal);
    while (!signal.aborted) {
      let lease: Lease;
      try {
        lease = await this.#lock.acquire(this.name, { ttl: this.#options.ttl, signal });
      } catch (error) {
        if (signal.aborted || MusterError.is(error, 'MUSTER_ABORTED') || MusterError.is(error, 'MUSTER_CLOSED')) break;
        throw error;
      }
      this.#lease = lease;
      // Not awaited before watching the term: a listener may run the leader's work for the whole
      // term (onElected(lease => startAssigning(lease))), and demotion must reach it as the lease
      // is lost, not after it returns. The next campaign waits for it, so terms never overlap.
      // A listener that throws is the leader's work crashing: the term ends, as a crashed process's would.
      const crashed = new AbortController();
      const elected = this.#notify(this.#elected, lease, (error) => crashed.abort(error));
      const reason = await this.#termEnd(lease, signal, crashed.signal);
      this.#lease = undefined;
      // A release that fails (the backend unreachable) must not keep onDemoted from its listeners.
      const release = () => lease.release().catch((error: unknown) => this.#warn('releasing the lease failed', error));
      if (lease.onLost.aborted) {
        await release();
        await this.#notify(this.#demoted, reason);
      } else {
        // Resigned, stopped or crashed while the lease is still ours: the work stops (onDemoted
        // returns) before the lease is given up, so the next leader never starts beside it.
        await this.#notify(this.#demoted, reason);
        await release();
      }
      await elected;
      if (this.#options.cooldown) await sleep(this.#options.cooldown, signal).catch(() => undefined);
    }
  }

  /**
   * Resolves when the term ends: the lease is lost or campaigning stops. Both listeners go when it
   * does, since `signal` outlives every term (one left per term would grow without bound).
   */
  #termEnd(lease: Lease, signal: AbortSignal, crashed: AbortSignal): Promise<unknown> {
    return new Promise<unknown>((resolve) => {
      const lost = lease.onLost;
      const end = (reason: unknown) => {
        lost.removeEventListener('abort', onLost);
        signal.removeEventListener('abort', onStop);
        crashed.removeEventListener('abort', onCrash);
        resolve(reason);
      };
      const onLost = () => end(lost.reason);
      const onStop = () => end(new LockLostError(this.name, 'resigned'));
      const onCrash = () => end(crashed.reason);
      if (lost.aborted) return onLost();
      if (crashed.aborted) return onCrash();
      if (signal.aborted) return onStop();
      lost.addEventListener('abort', onLost, { once: true });
      signal.addEventListener('abort', onStop, { once: true });
      crashed.addEventListener('abort', onCrash, { once: true });
    });
  }

  /**
   * Calls every listener at once (one may run the leader's work for the whole term, and the next
   * must not wait for it to return) and resolves when all have returned.
   */
  async #notify<A>(listeners: Set<(a: A) => void | Promise<void>>, arg: A, onError?: (error: unknown) => void): Promise<void> {
    await Promise.all(
      [...listeners].map(async (listener) => {
        try {
          // Marked, so that resign()/close() awaited from inside a listener does not wait for the listener itself.
          await insideListener.run(this, () => listener(arg));
        } catch (error) {
          // A listener's failure must not stop the election; report it where it can be seen.
          this.#warn('a listener threw', error);
          onError?.(error);
        }
      }),
    );
  }

  #warn(what: string, error: unknown): void {
    process.emitWarning(`LeaderElector '${this.name}': ${what}: ${(error as Error)?.message ?? String(error)}`);
  }

  /**
   * Stops campaigning and gives leadership up at once (the next leader need not wait a ttl):
   * onDemoted listeners are told and awaited, then the lease is released, then this resolves once
   * the onElected listeners have returned too. Called from inside a listener it resolves at once
   * (awaiting the end there would wait for that listener itself); the term still ends as above.
   */
  async resign(): Promise<void> {
    if (!this.#stop.signal.aborted) this.#stop.abort(new ClosedError(`leader elector '${this.name}'`));
    if (insideListener.getStore() === this) return;
    await this.#running?.catch(() => undefined);
  }

  close(): Promise<void> {
    return this.resign();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.resign();
  }
}
