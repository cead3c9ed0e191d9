// The lock client's failure paths, on a scripted backend and jest's fake timers (which move the
// timers and the clock together): slow, failing and never-settling renewals, slow acquires,
// failing releases, programming errors, and a lease lost then acquired again.
import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { BackendError, LockLostError, TimeoutError, type Clock, type Lease } from '../src/index.js';
import { createLock, type BackendCallOptions, type LeaseGrant, type LockBackend } from '../src/adapter.js';

/** Date.now() is fake under jest's fake timers, so this clock moves exactly with the timers. */
const clock: Clock = { now: () => Date.now() };

/** Settles after `ms` of (fake) time; ignores any signal, as a careless adapter would. */
const after = <T>(ms: number, value: T) => new Promise<T>((resolve) => setTimeout(() => resolve(value), ms));
const never = <T>() => new Promise<T>(() => undefined);
/** Takes `ms` of (fake) time unless the signal fires first, as a well-behaved adapter's request does. */
const latency = (ms: number, { signal }: BackendCallOptions) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(new BackendError('test', `request aborted: ${String(signal.reason)}`));
    });
  });

type Step = (call: number, options: BackendCallOptions) => Promise<LeaseGrant | undefined>;

/** One lock whose acquire, renew and release behave as each test scripts them. */
class ScriptedBackend implements LockBackend {
  readonly holder = 'scripted';
  token = 0n;
  acquireCalls = 0;
  renewCalls = 0;
  released: LeaseGrant[] = [];
  acquire: Step = async () => ({ token: ++this.token });
  renewStep: (call: number, options: BackendCallOptions) => Promise<void> = async () => undefined;
  releaseStep: () => Promise<void> = async () => undefined;

  tryAcquire(_name: string, options: BackendCallOptions): Promise<LeaseGrant | undefined> {
    return this.acquire(++this.acquireCalls, options);
  }
  async renew(_name: string, grant: LeaseGrant, options: BackendCallOptions): Promise<LeaseGrant> {
    await this.renewStep(++this.renewCalls, options);
    return grant;
  }
  async release(_name: string, grant: LeaseGrant): Promise<void> {
    this.released.push(grant);
    await this.releaseStep();
  }
}

const ttl = 1500;
const renewDeadline = ttl * (2 / 3);
const retryPeriod = ttl * (2 / 15);

function setup() {
  const backend = new ScriptedBackend();
  const lock = createLock(backend, { clock });
  return { backend, lock };
}

/** Moves fake time forward, letting promises settle between timers. */
const advance = (ms: number) => jest.advanceTimersByTimeAsync(ms);
/** Releases while time moves: a release first waits (bounded) for a renewal in flight. */
const release = async (lease: Lease) => {
  const released = lease.release();
  await advance(ttl * 2);
  await released;
};

beforeEach(() => {
  jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask'] });
});
afterEach(() => {
  jest.useRealTimers();
});

describe('renewal schedule (client-go: every retry period, give up at the renew deadline)', () => {
  it.each([0.17, 0.2, 0.4])('a steady renewal latency of %s × ttl keeps the lease', async (share) => {
    const { backend, lock } = setup();
    backend.renewStep = (_call, options) => latency(share * ttl, options);
    const lease = await lock.acquire('steady', { ttl });
    await advance(ttl * 20);
    expect(lease.onLost.aborted).toBe(false);
    expect(backend.renewCalls).toBeGreaterThan(10);
    expect(lease.expiresAt).toBeGreaterThan(clock.now());
    await release(lease);
  });

  it('one renewal that takes almost the renew deadline keeps the lease', async () => {
    const { backend, lock } = setup();
    backend.renewStep = (call, options) => latency(call === 2 ? renewDeadline * 0.95 : 10, options);
    const lease = await lock.acquire('hiccup', { ttl });
    await advance(ttl * 6);
    expect(backend.renewCalls).toBeGreaterThan(4);
    expect(lease.onLost.aborted).toBe(false);
    await release(lease);
  });

  it('expiresAt counts from when the last successful renewal was sent, not when it was answered', async () => {
    const { backend, lock } = setup();
    const latency = 200;
    let sentAt = 0;
    backend.renewStep = () => {
      sentAt = clock.now();
      return after(latency, undefined);
    };
    const lease = await lock.acquire('sent', { ttl });
    await advance(retryPeriod + latency + 1);
    expect(backend.renewCalls).toBe(1);
    expect(lease.expiresAt).toBe(sentAt + ttl);
    await release(lease);
  });

  it('renewals that keep failing give the lease up no later than expiresAt, and only transient errors are retried', async () => {
    const { backend, lock } = setup();
    const lease = await lock.acquire('failing', { ttl });
    const expiresAt = lease.expiresAt;
    backend.renewStep = () => Promise.reject(new BackendError('test', 'HTTP 503', { status: 503 }));
    let lostAt: number | undefined;
    lease.onLost.addEventListener('abort', () => (lostAt = clock.now()));
    await advance(ttl * 2);
    expect(lostAt).toBeDefined();
    expect(lostAt!).toBeLessThanOrEqual(expiresAt);
    expect(backend.renewCalls).toBeGreaterThan(2);
    expect(lease.onLost.reason).toMatchObject({ code: 'MUSTER_LOCK_LOST' });
    await expect(lease.renew()).rejects.toMatchObject({ code: 'MUSTER_LOCK_LOST' });
  });

  it('a lease given up at the renew deadline is given back to the backend at once (a late renewal may have landed), and close() waits for that', async () => {
    const { backend, lock } = setup();
    const lease = await lock.acquire('given-up', { ttl });
    backend.renewStep = (_call, options) => latency(ttl * 10, options); // renewals that never come back in time
    await advance(ttl);
    expect(lease.onLost.aborted).toBe(true);
    await advance(10);
    // Nobody called release(): before, the backend heard nothing and kept a renewal that landed late for up to a ttl.
    expect(backend.released).toHaveLength(1);
    await lease.release(); // already given back: not twice
    await lock.close();
    expect(backend.released).toHaveLength(1);
  });

  it('a lease lost because the backend says so (another holder) is not released there', async () => {
    const { backend, lock } = setup();
    const lease = await lock.acquire('taken', { ttl });
    backend.renewStep = async () => {
      throw new LockLostError('taken', 'another holder');
    };
    await advance(ttl);
    expect(lease.onLost.aborted).toBe(true);
    await lease.release();
    await lock.close();
    expect(backend.released).toHaveLength(0);
  });

  it('a renewal that fails once and then succeeds keeps the lease', async () => {
    const { backend, lock } = setup();
    backend.renewStep = async (call) => {
      if (call === 1) throw new BackendError('test', 'HTTP 500', { status: 500 });
    };
    const lease = await lock.acquire('blip', { ttl });
    await advance(ttl * 3);
    expect(backend.renewCalls).toBeGreaterThan(3);
    expect(lease.onLost.aborted).toBe(false);
    await release(lease);
  });

  it('a backend that reports the lease lost fires onLost at once', async () => {
    const { backend, lock } = setup();
    const lease = await lock.acquire('taken', { ttl });
    const report = new LockLostError('taken', 'another holder acquired it');
    backend.renewStep = () => Promise.reject(report);
    await advance(retryPeriod + 1);
    expect(lease.onLost.aborted).toBe(true);
    expect(lease.onLost.reason).toBe(report);
  });

  it('a renewal failing with a programming error loses the lease at once, with the error as cause', async () => {
    const { backend, lock } = setup();
    const lease = await lock.acquire('bug', { ttl });
    const bug = new TypeError("Cannot read properties of undefined (reading 'metadata')");
    backend.renewStep = () => Promise.reject(bug);
    await advance(retryPeriod + 1);
    expect(backend.renewCalls).toBe(1);
    expect(lease.onLost.aborted).toBe(true);
    expect((lease.onLost.reason as Error).cause).toBe(bug);
  });
});

describe('a backend call that never settles', () => {
  it('fires onLost at the give-up point by timer, and release() still returns', async () => {
    const { backend, lock } = setup();
    const lease = await lock.acquire('stuck', { ttl });
    const expiresAt = lease.expiresAt;
    backend.renewStep = () => never();
    let lostAt: number | undefined;
    lease.onLost.addEventListener('abort', () => (lostAt = clock.now()));
    await advance(ttl);
    expect(backend.renewCalls).toBe(1);
    expect(lostAt).toBeDefined();
    expect(lostAt!).toBeLessThanOrEqual(expiresAt);
    const released = lease.release();
    await advance(ttl);
    await expect(released).resolves.toBeUndefined();
  });

  it('onLost reads as aborted once expiresAt has passed, even if no timer could run', async () => {
    const { backend, lock } = setup();
    backend.renewStep = () => never();
    const lease = await lock.acquire('blocked', { ttl });
    // Move the clock without running timers, as a blocked event loop would.
    jest.setSystemTime(lease.expiresAt);
    expect(lease.onLost.aborted).toBe(true);
  });

  it('an explicit renew() under way rejects with MUSTER_LOCK_LOST when the lease is given up, though its call never settles', async () => {
    const { backend, lock } = setup();
    const lease = await lock.acquire('stuck-renew', { ttl });
    backend.renewStep = () => never();
    let outcome: unknown;
    lease.renew().then(
      () => (outcome = 'renewed'),
      (error: unknown) => (outcome = error),
    );
    await advance(ttl);
    expect(lease.onLost.aborted).toBe(true);
    // Before: renew() waited on the call for ever, though onLost had fired and the lease was gone.
    expect(outcome).toMatchObject({ code: 'MUSTER_LOCK_LOST' });
  });

  it('a release that never settles does not hang close()', async () => {
    const { backend, lock } = setup();
    backend.releaseStep = () => never();
    const lease = await lock.acquire('stuck-release', { ttl });
    const closed = lock.close();
    await advance(ttl * 2);
    await expect(closed).resolves.toBeUndefined();
    expect(lease.onLost.aborted).toBe(true);
  });
});

describe('acquire', () => {
  it('never returns a lease that expired while the attempt was under way; releases that grant and keeps waiting', async () => {
    const { backend, lock } = setup();
    backend.acquire = (call) => after(call === 1 ? ttl * 1.2 : 10, { token: ++backend.token });
    const pending = lock.acquire('slow', { ttl, wait: ttl * 10 });
    await advance(ttl * 2);
    const lease = await pending;
    expect(lease.expiresAt).toBeGreaterThan(clock.now());
    expect(lease.token).toBe(2n);
    expect(backend.released.map((g) => g.token)).toEqual([1n]);
    await release(lease);
  });

  it('a grant that comes back with less than a retry period left is not handed out: it would be lost before its first renewal', async () => {
    const { backend, lock } = setup();
    backend.acquire = (call) => after(call === 1 ? ttl - retryPeriod / 2 : 10, { token: ++backend.token });
    const pending = lock.acquire('nearly-expired', { ttl, wait: ttl * 10 });
    await advance(ttl * 2);
    const lease = await pending;
    expect(lease.token).toBe(2n);
    expect(lease.expiresAt - clock.now()).toBeGreaterThanOrEqual(retryPeriod);
    expect(backend.released.map((g) => g.token)).toEqual([1n]);
    await release(lease);
  });

  it('acquire with wait 0 (or a wait shorter than a round trip) makes one whole attempt: a free lock is acquired', async () => {
    const { backend, lock } = setup();
    backend.acquire = () => after(retryPeriod / 4, { token: ++backend.token });
    for (const wait of [0, 1]) {
      const pending = lock.acquire(`free-${wait}`, { ttl, wait });
      await advance(retryPeriod / 2);
      const lease = await pending;
      expect(lease.token).toBe(backend.token);
      await release(lease);
    }
  });

  it('acquire with wait 0 on a backend that hangs rejects a second after its attempt was sent', async () => {
    const { backend, lock } = setup();
    backend.acquire = () => never();
    const pending = lock.acquire('hung', { ttl, wait: 0 }).catch((error: unknown) => error);
    await advance(1000 - 1);
    let settled = false;
    void pending.then(() => (settled = true));
    await advance(0);
    expect(settled).toBe(false);
    await advance(2);
    expect(await pending).toBeInstanceOf(TimeoutError);
  });

  it('tryAcquire returns undefined rather than an expired lease', async () => {
    const { backend, lock } = setup();
    backend.acquire = () => after(ttl + 1, { token: ++backend.token });
    const pending = lock.tryAcquire('slow-once', { ttl });
    await advance(ttl * 2);
    await expect(pending).resolves.toBeUndefined();
    expect(backend.released).toHaveLength(1);
  });

  it('a programming error from the adapter surfaces as itself, after one attempt', async () => {
    const { backend, lock } = setup();
    const bug = new TypeError('grant.state is undefined');
    backend.acquire = () => Promise.reject(bug);
    await expect(lock.acquire('bug', { ttl, wait: ttl })).rejects.toBe(bug);
    expect(backend.acquireCalls).toBe(1);
  });

  it('transient errors are retried; the timeout carries the last one as cause and does not blame another holder', async () => {
    const { backend, lock } = setup();
    const down = new BackendError('test', 'connect ECONNREFUSED 127.0.0.1:1', { status: undefined });
    backend.acquire = () => Promise.reject(down);
    const pending = lock.acquire('down', { ttl, wait: ttl * 2 }).catch((error: unknown) => error);
    await advance(ttl * 4);
    const error = (await pending) as TimeoutError;
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error.cause).toBe(down);
    expect(error.message).not.toMatch(/another holder/);
    expect(error.message).toMatch(/ECONNREFUSED/);
    expect(backend.acquireCalls).toBeGreaterThan(1);
  });

  it('a lease lost, then the lock acquired again: a new lease with a new token, the old one stays lost', async () => {
    const { backend, lock } = setup();
    const first = await lock.acquire('again', { ttl });
    backend.renewStep = () => Promise.reject(new LockLostError('again', 'the session was invalidated'));
    await advance(retryPeriod + 1);
    expect(first.onLost.aborted).toBe(true);
    backend.renewStep = async () => undefined;
    const second = await lock.acquire('again', { ttl });
    expect(second.token).toBeGreaterThan(first.token);
    await advance(ttl * 2);
    expect(second.onLost.aborted).toBe(false);
    expect(first.onLost.aborted).toBe(true);
    await expect(first.renew()).rejects.toMatchObject({ code: 'MUSTER_LOCK_LOST' });
    await release(second);
  });
});

describe('release and withLock', () => {
  it('a failing release rejects with the backend error, fires onLost anyway and is idempotent', async () => {
    const { backend, lock } = setup();
    const failure = new BackendError('test', 'HTTP 500', { status: 500 });
    backend.releaseStep = () => Promise.reject(failure);
    const lease = await lock.acquire('release-fails', { ttl });
    await expect(lease.release()).rejects.toBe(failure);
    expect(lease.onLost.aborted).toBe(true);
    await expect(lease.release()).rejects.toBe(failure);
    expect(backend.released).toHaveLength(1);
  });

  it("withLock keeps fn's result when the release fails, and reports the failure to onReleaseError", async () => {
    const { backend, lock } = setup();
    const failure = new BackendError('test', 'HTTP 500', { status: 500 });
    backend.releaseStep = () => Promise.reject(failure);
    const reported: unknown[] = [];
    const value = await lock.withLock('keep-value', async () => 'done', { ttl, onReleaseError: (error) => reported.push(error) });
    expect(value).toBe('done');
    expect(reported).toEqual([failure]);
  });

  it("withLock keeps fn's error when the release fails too", async () => {
    const { backend, lock } = setup();
    backend.releaseStep = () => Promise.reject(new BackendError('test', 'HTTP 500', { status: 500 }));
    const mine = new Error('the work failed');
    const reported: unknown[] = [];
    await expect(
      lock.withLock('keep-error', () => Promise.reject(mine), { ttl, onReleaseError: (error) => reported.push(error) }),
    ).rejects.toBe(mine);
    expect(reported).toHaveLength(1);
  });

  it('without onReleaseError, a failed release becomes a process warning', async () => {
    const { backend, lock } = setup();
    backend.releaseStep = () => Promise.reject(new BackendError('test', 'HTTP 500', { status: 500 }));
    const emitWarning = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    try {
      await expect(lock.withLock('warned', async (lease: Lease) => lease.token, { ttl })).resolves.toBe(1n);
      expect(emitWarning.mock.calls).toEqual([
        [
          expect.stringMatching(/withLock\('warned'\): release failed after the function succeeded.*HTTP 500/),
          { type: 'MusterWarning', code: 'MUSTER_RELEASE_FAILED' },
        ],
      ]);
    } finally {
      emitWarning.mockRestore();
    }
  });
});
