// A holder whose wall clock jumps (NTP step, an operator's date -s) judges its lease as before:
// the lock client's default clock is monotonic, so a jump back cannot keep a holder acting on an
// expired lease, and a jump forward cannot end a lease that renews. Date.now is moved here; the
// lease must not notice either way.
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { LockLostError } from '../src/index.js';
import { createLock, type LeaseGrant, type LockBackend } from '../src/adapter.js';

/** Renews while `renewing` is true; after that a renewal never settles (a backend gone silent). */
class SilencingBackend implements LockBackend {
  readonly holder = 'wall-clock';
  renewing = true;
  renewals = 0;
  #onRenewal: (() => void) | undefined;
  async tryAcquire(): Promise<LeaseGrant> {
    return { token: 1n };
  }
  renew(_name: string, grant: LeaseGrant, { signal }: { signal: AbortSignal }): Promise<LeaseGrant> {
    if (!this.renewing) return new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason as Error)));
    this.renewals++;
    this.#onRenewal?.();
    return Promise.resolve(grant);
  }
  async release(): Promise<void> {}
  /** Resolves once `n` renewals have succeeded in all. */
  renewed(n: number): Promise<void> {
    return new Promise((resolve) => {
      const check = () => this.renewals >= n && resolve();
      this.#onRenewal = check;
      check();
    });
  }
}

const onLost = (signal: AbortSignal) => new Promise<unknown>((resolve) => signal.addEventListener('abort', () => resolve(signal.reason)));

const jumpWallClock = (ms: number) => {
  const realNow = Date.now.bind(Date);
  jest.spyOn(Date, 'now').mockImplementation(() => realNow() + ms);
};

describe('a holder whose wall clock jumps', () => {
  afterEach(() => {
    jest.restoreAllMocks();
  });

  it('back by an hour after its last renewal: it still loses the lease on time (it must not act on an expired lease)', async () => {
    const backend = new SilencingBackend();
    const lock = createLock(backend);
    const lease = await lock.acquire('job', { ttl: 3000 });
    await backend.renewed(2);
    backend.renewing = false;
    await new Promise((resolve) => setImmediate(resolve)); // the renewal's confirmation runs first
    jumpWallClock(-3_600_000);
    // On a wall clock stepped back an hour, this would wait an hour (the test's timeout fails it).
    expect(await onLost(lease.onLost)).toBeInstanceOf(LockLostError);
    await lock.close();
  }, 20_000);

  it('forward by an hour while it renews: it keeps the lease', async () => {
    const backend = new SilencingBackend();
    const lock = createLock(backend);
    const lease = await lock.acquire('job', { ttl: 3000 });
    jumpWallClock(3_600_000);
    // On the wall clock the lease would have expired an hour ago: no renewal would be tried.
    await backend.renewed(3);
    expect(lease.onLost.aborted).toBe(false);
    await lock.close();
  }, 20_000);
});
