// A holder paused past its lease (a SIGSTOP, a long GC, a blocked event loop) that resumes must
// learn it lost the lease before it acts, however it reads that: through `lease.onLost.aborted`,
// or through the signal it kept or handed to its work (`const { onLost } = lease`), which the
// give-up timer has not had a chance to abort yet when the first code after the pause runs.
import { describe, expect, it } from '@jest/globals';
import { systemClock } from '../src/clock.js';
import { createLock } from '../src/adapter.js';
import { StaticLockBackend } from '../../adapter-static/src/lock.js';

/** Blocks the event loop until `at` on the lock's clock: no timer runs meanwhile, as in a paused process. */
function pauseUntil(at: number): void {
  while (systemClock.now() < at) {
    // busy: nothing else in this process runs
  }
}

describe('a lease whose holder was paused past its expiry', () => {
  it('reads lost through the signal it kept, at once after the pause, before any timer ran', async () => {
    const lock = createLock(new StaticLockBackend({ scope: `paused-${Math.random()}` }), { timing: { minTtl: 1 } });
    const lease = await lock.acquire('paused', { ttl: 300 });
    const kept = lease.onLost;
    const work = { signal: kept };
    pauseUntil(lease.expiresAt + 50);
    // The work's first check after the pause, synchronously: no timer has run yet.
    expect(work.signal.aborted).toBe(true);
    expect(() => work.signal.throwIfAborted()).toThrow(expect.objectContaining({ code: 'MUSTER_LOCK_LOST' }));
    expect(lease.onLost.aborted).toBe(true);
    await expect(lease.renew()).rejects.toMatchObject({ code: 'MUSTER_LOCK_LOST' });
    await lock.close();
  });

  it('the kept signal stays live while the lease is held', async () => {
    const lock = createLock(new StaticLockBackend({ scope: `held-${Math.random()}` }), { timing: { minTtl: 1 } });
    const lease = await lock.acquire('held', { ttl: 2000 });
    const kept = lease.onLost;
    expect(kept.aborted).toBe(false);
    expect(() => kept.throwIfAborted()).not.toThrow();
    await lease.release();
    expect(kept.aborted).toBe(true);
    await lock.close();
  });
});
