// The conformance kit must fail implementations that break the contract; a suite that passes
// anything would prove nothing.
import { describe, expect, it } from '@jest/globals';
import type { Lock } from '../src/index.js';
import { createLock, createHeartbeatStore, type LockBackend } from '../src/adapter.js';
import { lockConformance, heartbeatConformance } from '../src/testing/index.js';
import { failures } from './suite-failures.js';
import { StaticLockBackend } from '../../adapter-static/src/lock.js';
import { StaticHeartbeatBackend } from '../../adapter-static/src/heartbeat.js';

/** Grants every request: no mutual exclusion at all. */
class GrantEverything implements LockBackend {
  holder = 'anyone';
  token = 0n;
  async tryAcquire() {
    return { token: ++this.token };
  }
  async renew(_n: string, grant: { token: bigint }) {
    return grant;
  }
  async release() {}
}

/** Excludes correctly but hands out the same token every time. */
class ConstantToken extends StaticLockBackend {
  override async tryAcquire(...args: Parameters<StaticLockBackend['tryAcquire']>) {
    const grant = await super.tryAcquire(...args);
    return grant && { ...grant, token: 1n };
  }
}

describe('the conformance kit fails broken implementations', () => {
  it('a lock without mutual exclusion', async () => {
    const shared = new GrantEverything();
    const failed = await failures(
      (runner) => lockConformance(runner, { name: 'broken', ttl: 200, factory: () => createLock(shared, { timing: { minTtl: 1 } }) }),
      /mutual exclusion|cannot take/,
    );
    expect(failed.length).toBe(2);
  });

  it('a lock whose fencing token does not increase', async () => {
    const scope = `const-${Math.random()}`;
    const failed = await failures(
      (runner) =>
        lockConformance(runner, {
          name: 'broken',
          ttl: 200,
          factory: (): Lock => createLock(new ConstantToken({ scope }), { timing: { minTtl: 1 } }),
        }),
      /token/,
    );
    expect(failed).toEqual([
      'mutual exclusion under concurrent contenders, with tokens increasing in order of holding',
      'the fencing token strictly increases each time the lock changes hands',
    ]);
  });

  it('a heartbeat store that never lets members go stale', async () => {
    const scope = `immortal-${Math.random()}`;
    const failed = await failures(
      (runner) =>
        heartbeatConformance(runner, {
          name: 'broken',
          ttl: 100,
          propagation: 500,
          // A clock that stands still: nothing ever expires.
          factory: () => createHeartbeatStore(new StaticHeartbeatBackend({ scope }), { clock: { now: () => 0 } }),
        }),
      /stale/,
    );
    expect(failed).toEqual([
      'a member goes stale after its ttl and alive again when it beats',
      'watch reports snapshot, joined, updated, stale, alive and left',
    ]);
  }, 30_000);
});
