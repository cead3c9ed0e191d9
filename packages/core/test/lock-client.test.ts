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
});
