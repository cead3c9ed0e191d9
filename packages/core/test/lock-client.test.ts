import { describe, expect, it } from '@jest/globals';
import { createLock } from '../src/adapter.js';
import { StaticLockBackend } from '../../adapter-static/src/lock.js';

describe('createLock timing', () => {
  it('a ttl whose renew deadline is a fraction of a millisecond still renews and releases', async () => {
    // 1000 ms × 2/3 = 666.67 ms: AbortSignal.timeout() throws on fractions unless rounded.
    const lock = createLock(new StaticLockBackend({ scope: `fraction-${Math.random()}` }), { timing: { minTtl: 1 } });
    const lease = await lock.acquire('fraction', { ttl: 1000 });
    await lease.renew();
    await lease.release();
    expect(lease.onLost.aborted).toBe(true);
    await lock.close();
  });

  it('acquire refuses a wait that is NaN or negative (NaN compares false with every deadline: it waited for ever)', async () => {
    const lock = createLock(new StaticLockBackend({ scope: `wait-${Math.random()}` }), { timing: { minTtl: 1 } });
    const held = await lock.acquire('busy', { ttl: 60_000 });
    for (const wait of [Number.NaN, -1]) {
      await expect(lock.acquire('busy', { ttl: 60_000, wait })).rejects.toMatchObject({
        code: 'MUSTER_INVALID_ARGUMENT',
        message: expect.stringContaining(`got ${wait}`),
      });
    }
    await held.release();
    await lock.close();
  });
});
