// close() racing calls in flight: a grant that lands after close() was called (the backend had
// already taken the lock when the abort came) must be given back, not handed out as a lease nobody
// will release, which would keep every other contender waiting out its ttl.
import { describe, expect, it } from '@jest/globals';
import { createLock, type BackendCallOptions, type LeaseGrant, type LockBackend } from '../src/adapter.js';

/** A backend whose next tryAcquire answers when the test says, whatever its signal says. */
class LateGrantBackend implements LockBackend {
  readonly holder = 'late';
  readonly released: LeaseGrant[] = [];
  renewals = 0;
  #answer: ((grant: LeaseGrant) => void) | undefined;
  #called: () => void = () => undefined;
  readonly called = new Promise<void>((resolve) => (this.#called = resolve));

  tryAcquire(_name: string, _options: BackendCallOptions): Promise<LeaseGrant | undefined> {
    this.#called();
    return new Promise((resolve) => (this.#answer = resolve));
  }
  grant(token: bigint): void {
    this.#answer?.({ token });
  }
  async renew(_name: string, grant: LeaseGrant): Promise<LeaseGrant> {
    this.renewals++;
    return grant;
  }
  #onRelease: () => void = () => undefined;
  /** Resolves once a grant has been released (the release runs in the background of a call that gave up). */
  readonly releasedOnce = () =>
    this.released.length > 0 ? Promise.resolve() : new Promise<void>((resolve) => (this.#onRelease = resolve));
  async release(_name: string, grant: LeaseGrant): Promise<void> {
    if (this.closed) throw new Error('release after the backend was closed');
    this.released.push(grant);
    this.#onRelease();
  }
  closed = false;
  async close(): Promise<void> {
    this.closed = true;
  }
}

describe('a grant that lands after its caller gave up', () => {
  it.each(['acquire', 'tryAcquire'] as const)('a grant that lands after close() is released and %s rejects', async (method) => {
    const backend = new LateGrantBackend();
    const lock = createLock(backend);
    // close() ends the call at once (its abort no longer waits for the backend), so watch for that from the start.
    const rejected = expect(lock[method]('job', { ttl: 60_000 })).rejects.toMatchObject({
      code: expect.stringMatching(/^MUSTER_(CLOSED|ABORTED)$/),
    });
    await backend.called;
    const closed = lock.close();
    // The grant lands a little later, as a request under way would: close() must keep the backend
    // open until it is given back (before: closed at once, so the release failed unseen).
    await new Promise((resolve) => setImmediate(resolve));
    backend.grant(7n);
    await closed;
    expect(backend.closed).toBe(true);
    await rejected;
    expect(backend.released.map((g) => g.token)).toEqual([7n]);
  });

  it.each(['acquire', 'tryAcquire'] as const)('a grant that lands after the caller aborted is released and %s rejects', async (method) => {
    const backend = new LateGrantBackend();
    const lock = createLock(backend);
    const controller = new AbortController();
    const pending = lock[method]('job', { ttl: 60_000, signal: controller.signal });
    await backend.called;
    controller.abort();
    backend.grant(8n);
    await expect(pending).rejects.toMatchObject({ code: 'MUSTER_ABORTED' });
    expect(backend.released.map((g) => g.token)).toEqual([8n]);
    expect(backend.renewals).toBe(0);
    await lock.close();
  });
});

describe('an abort a few microtasks after the grant', () => {
  it('either hands the lease to the caller or releases it: never a lease nobody holds', async () => {
    // The gap: the grant is kept (a lease made) before acquire's own await sees it; an abort then.
    for (let ticks = 0; ticks < 12; ticks++) {
      const backend = new LateGrantBackend();
      const lock = createLock(backend);
      const controller = new AbortController();
      const pending = lock.acquire('job', { ttl: 60_000, signal: controller.signal }).then(
        (lease) => lease,
        () => undefined,
      );
      await backend.called;
      backend.grant(BigInt(ticks + 1));
      for (let i = 0; i < ticks; i++) await Promise.resolve();
      controller.abort();
      const lease = await pending;
      if (lease) await lease.release();
      else await backend.releasedOnce();
      expect(backend.released.map((g) => g.token)).toEqual([BigInt(ticks + 1)]);
      await lock.close();
    }
  });
});

describe('acquire with a wait while the backend hangs (a paused server, a black-holed connection)', () => {
  it('rejects with MUSTER_TIMEOUT at its wait, and a grant that lands afterwards is released, not handed to nobody', async () => {
    const backend = new LateGrantBackend();
    const lock = createLock(backend);
    // Before: acquire waited for the hanging call, however long past its wait (the adapter's request timeout, or for ever).
    await expect(lock.acquire('job', { ttl: 60_000, wait: 100 })).rejects.toMatchObject({ code: 'MUSTER_TIMEOUT' });
    // The server acts on the queued request late, as one resumed after SIGSTOP does.
    backend.grant(9n);
    // (review) With the client still open: closing it here would release the grant through close()'s
    // own path, and the test would pass without the timed-out call's own release.
    await backend.releasedOnce();
    expect(backend.released.map((g) => g.token)).toEqual([9n]);
    expect(backend.renewals).toBe(0);
    await lock.close();
  }, 20_000);

  it.each(['acquire', 'tryAcquire'] as const)(
    '%s rejects with MUSTER_ABORTED at the abort though the call ignores its signal, and a grant that lands afterwards is released',
    async (method) => {
      const backend = new LateGrantBackend();
      const lock = createLock(backend);
      const controller = new AbortController();
      const pending = lock[method]('job', { ttl: 60_000, signal: controller.signal });
      await backend.called;
      controller.abort();
      // Before: the call was awaited whatever the signal said, so the abort waited for an answer that never came.
      await expect(pending).rejects.toMatchObject({ code: 'MUSTER_ABORTED' });
      backend.grant(10n);
      await backend.releasedOnce();
      expect(backend.released.map((g) => g.token)).toEqual([10n]);
      expect(backend.renewals).toBe(0);
      await lock.close();
    },
    10_000,
  );

  it('an abort ends acquire while it waits for a change the backend never reports (waitForChange ignoring its signal)', async () => {
    const held: LockBackend = {
      holder: 'waiting',
      tryAcquire: async () => undefined,
      renew: async (_name, grant) => grant,
      release: async () => undefined,
      waitForChange: () => new Promise(() => undefined),
    };
    const lock = createLock(held);
    const controller = new AbortController();
    const pending = lock.acquire('job', { ttl: 60_000, signal: controller.signal });
    // Let it reach the wait (its one attempt answered at once: another holder has the lock).
    await new Promise((resolve) => setImmediate(resolve));
    controller.abort();
    // Before: acquire stayed in waitForChange for ever.
    await expect(pending).rejects.toMatchObject({ code: 'MUSTER_ABORTED' });
    await lock.close();
  }, 10_000);
});
