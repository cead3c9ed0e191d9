import { systemClock, type Clock } from '../clock.js';
import { simulateCrash } from '../coordination/lock-client.js';
import type { Lease, Lock } from '../ports/lock.js';
import { lockHangCases, type BackendHang } from './hang.js';
import { assert, cleaningRunner, eventually, expectCode, uniqueName, wait, type SuiteRunner } from './runner.js';

export interface LockSuiteOptions {
  /** Shown in test names. */
  readonly name: string;
  /** A new, independent client of the shared backend, as another process would have. */
  readonly factory: () => Lock | Promise<Lock>;
  /** A short ttl the backend honours (ms); expiry tests wait about this long. */
  readonly ttl: number;
  /**
   * Makes `lock` stop renewing without releasing, as a crashed process would. Clients built with
   * createLock() support this already; other implementations must provide it.
   */
  readonly crash?: (lock: Lock) => void | Promise<void>;
  /** Contenders in the mutual-exclusion test (default 5). */
  readonly contenders?: number;
  /** Per-test timeout (ms); default 10 × ttl + 20 s. */
  readonly timeout?: number;
  /** The clock the factory's clients judge `expiresAt` on (default systemClock). */
  readonly clock?: Clock;
  /**
   * Makes the backend hang for the clients the factory made (see BackendHang). Without it the cases
   * that need a hanging backend (acquire's wait and abort, a late grant released, onLost by
   * expiresAt) are skipped, and their names say so.
   */
  readonly hang?: BackendHang;
}

/**
 * The Lock contract every adapter must pass against its real backend: mutual exclusion under
 * concurrent contenders, strictly increasing fencing tokens, expiry of a crashed holder, release
 * letting the next in, wait timeout, abort, onLost, withLock, close; and, when the adapter can make
 * its backend hang (`options.hang`), the same promises while no answer comes.
 */
export function lockConformance(runner: SuiteRunner, options: LockSuiteOptions): void {
  const { ttl } = options;
  const clock = options.clock ?? systemClock;
  const timeout = options.timeout ?? ttl * 10 + 20_000;
  const crash =
    options.crash ??
    ((lock: Lock) => {
      const hook = (lock as unknown as Record<symbol, (() => void) | undefined>)[simulateCrash];
      if (!hook) throw new Error('this Lock was not built with createLock(); pass options.crash to the suite');
      hook.call(lock);
    });

  const { open, test } = cleaningRunner(runner, timeout);
  const client = () => open(options.factory);

  runner.describe(`Lock conformance: ${options.name}`, () => {
    test('acquire returns a lease that other clients cannot take', async () => {
      const [a, b] = [await client(), await client()];
      const name = uniqueName('lock');
      const lease = await a.acquire(name, { ttl });
      assert.equal(lease.name, name);
      assert.equal(typeof lease.token, 'bigint');
      assert.ok(lease.holder.length > 0, 'lease.holder is empty');
      assert.ok(lease.expiresAt > clock.now(), "lease.expiresAt is not in the future (on the lock client's clock)");
      assert.equal(lease.onLost.aborted, false);
      assert.equal(await b.tryAcquire(name, { ttl }), undefined, 'a second client got a held lock');
      await lease.release();
      const next = await b.tryAcquire(name, { ttl });
      assert.ok(next, 'the lock was not free after release');
      await next.release();
    });

    test('mutual exclusion under concurrent contenders, with tokens increasing in order of holding', async () => {
      const name = uniqueName('mutex');
      const n = options.contenders ?? 5;
      const locks = await Promise.all(Array.from({ length: n }, () => client()));
      let inside = 0;
      let maxInside = 0;
      const tokens: bigint[] = [];
      await Promise.all(
        locks.map(async (lock) => {
          for (let round = 0; round < 2; round++) {
            await lock.withLock(
              name,
              async (lease) => {
                inside++;
                maxInside = Math.max(maxInside, inside);
                tokens.push(lease.token);
                await wait(5);
                inside--;
              },
              { ttl, wait: timeout },
            );
          }
        }),
      );
      assert.equal(maxInside, 1, `${maxInside} holders were inside the critical section at once`);
      assert.equal(tokens.length, n * 2);
      for (let i = 1; i < tokens.length; i++) {
        assert.ok(tokens[i]! > tokens[i - 1]!, `fencing tokens did not strictly increase: ${tokens.join(', ')}`);
      }
    });

    test('the fencing token strictly increases each time the lock changes hands', async () => {
      const [a, b] = [await client(), await client()];
      const name = uniqueName('token');
      const seen: bigint[] = [];
      for (const lock of [a, b, a, b]) {
        const lease = await lock.acquire(name, { ttl, wait: timeout });
        seen.push(lease.token);
        await lease.release();
      }
      for (let i = 1; i < seen.length; i++) assert.ok(seen[i]! > seen[i - 1]!, `tokens ${seen.join(', ')} are not strictly increasing`);
    });

    test('a crashed holder expires after its ttl and the next contender gets the lock', async () => {
      const [a, b] = [await client(), await client()];
      const name = uniqueName('expiry');
      const first = await a.acquire(name, { ttl });
      await crash(a);
      assert.equal(await b.tryAcquire(name, { ttl }), undefined, 'the lock was free right after the holder crashed');
      const second = await b.acquire(name, { ttl, wait: ttl * 5 + 5000 });
      assert.ok(second.token > first.token, 'the new holder did not get a larger token');
      await expectCode(first.renew(), 'MUSTER_LOCK_LOST', 'renew() by the crashed holder after another took over');
      assert.equal(first.onLost.aborted, true, 'onLost did not fire for the superseded holder');
      await second.release();
    });

    test('a live holder keeps the lock beyond its ttl by renewing in the background', async () => {
      const [a, b] = [await client(), await client()];
      const name = uniqueName('renewal');
      const lease = await a.acquire(name, { ttl });
      await wait(ttl * 2.5);
      assert.equal(lease.onLost.aborted, false, `the lease was lost: ${String(lease.onLost.reason)}`);
      assert.equal(await b.tryAcquire(name, { ttl }), undefined, 'the lock was taken from a renewing holder');
      await lease.release();
    });

    test('release lets a waiting contender in without waiting out the ttl', async () => {
      const [a, b] = [await client(), await client()];
      const name = uniqueName('handover');
      const long = Math.max(ttl * 20, 60_000);
      const held = await a.acquire(name, { ttl: long });
      const waiting = b.acquire(name, { ttl, wait: long / 2 });
      await wait(50);
      await held.release();
      const next = await waiting;
      assert.ok(next.token > held.token);
      await next.release();
    });

    test('wait times out with MUSTER_TIMEOUT; wait 0 still takes a free lock (one whole attempt)', async () => {
      const [a, b] = [await client(), await client()];
      const name = uniqueName('timeout');
      const held = await a.acquire(name, { ttl: Math.max(ttl * 20, 60_000) });
      await expectCode(b.acquire(name, { ttl, wait: 200 }), 'MUSTER_TIMEOUT', 'acquire with wait');
      await expectCode(b.acquire(name, { ttl, wait: 0 }), 'MUSTER_TIMEOUT', 'acquire with wait 0 of a held lock');
      await held.release();
      const free = await b.acquire(name, { ttl, wait: 0 });
      assert.equal(free.name, name, 'acquire with wait 0 of a free lock');
      await free.release();
    });

    test('an aborted acquire rejects with MUSTER_ABORTED', async () => {
      const [a, b] = [await client(), await client()];
      const name = uniqueName('abort');
      const held = await a.acquire(name, { ttl: Math.max(ttl * 20, 60_000) });
      const controller = new AbortController();
      const pending = b.acquire(name, { ttl, signal: controller.signal });
      setTimeout(() => controller.abort(), 100);
      await expectCode(pending, 'MUSTER_ABORTED', 'acquire after abort');
      const already = AbortSignal.abort();
      await expectCode(b.acquire(name, { ttl, signal: already }), 'MUSTER_ABORTED', 'acquire with an aborted signal');
      await held.release();
    });

    test('after release, renew throws MUSTER_LOCK_LOST, onLost has fired and release is idempotent', async () => {
      const a = await client();
      const lease = await a.acquire(uniqueName('released'), { ttl });
      await lease.release();
      assert.equal(lease.onLost.aborted, true);
      await expectCode(lease.renew(), 'MUSTER_LOCK_LOST', 'renew() after release');
      await lease.release();
    });

    test('withLock releases when the function throws, and returns its value otherwise', async () => {
      const [a, b] = [await client(), await client()];
      const name = uniqueName('withlock');
      await assert.rejects(
        a.withLock(name, async () => Promise.reject(new Error('boom')), { ttl }),
        /boom/,
      );
      const value = await b.withLock(name, async (lease: Lease) => `held ${lease.name}`, { ttl, wait: 5000 });
      assert.equal(value, `held ${name}`);
    });

    test('close releases every held lease', async () => {
      const [a, b] = [await client(), await client()];
      const name = uniqueName('close');
      const lease = await a.acquire(name, { ttl: Math.max(ttl * 20, 60_000) });
      await a.close();
      assert.equal(lease.onLost.aborted, true, 'onLost did not fire on close');
      const next = await eventually('the lock to be free after close', () => b.tryAcquire(name, { ttl }), 5000);
      await next.release();
    });

    lockHangCases(runner, { test, client, hang: options.hang, ttl, clock });
  });
}
