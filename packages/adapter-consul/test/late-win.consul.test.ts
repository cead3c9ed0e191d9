// Defect 1 of issue 11, against the real agent: a contender that waited in acquire() for most of
// its session's life wins the lock late (A holds; B waits; A releases; B acquires; C calls
// acquire). Consul reaps a session 2×TTL after its last renewal; if B won on a session it had not
// renewed since it was created, Consul frees the lock under B within a second: with lockDelay 0 C
// takes it while B still believes it holds it, with lockDelay 1 s B loses a healthy lock. B must
// keep the lock and C must time out.
import { describe, expect, test } from '@jest/globals';
import type { Lease } from '@muster/core';
import { uniqueName } from '@muster/core/testing';
import { entry, portOpener } from './consul-testenv.js';

const open = portOpener();
const ttl = 3000;

async function lateWin(lockDelay: number): Promise<{ cOutcome: string; bLost: boolean }> {
  const options = { minSessionTtl: '1s', lockDelay: `${lockDelay}ms` };
  const [a, b, c] = [await open('lock', options), await open('lock', options), await open('lock', options)];
  const name = uniqueName(`late-win-${lockDelay}`);
  const held = await a.acquire(name, { ttl });
  const waitingSince = Date.now();
  const waiting = b.acquire(name, { ttl, wait: 30_000 });
  // B's first attempt creates its session at once. Release when that session is 2×TTL − TTL/4 old:
  // B wins in the last quarter-TTL before an unrenewed session is reaped, before its first renewal.
  await new Promise((r) => setTimeout(r, waitingSince + 2 * ttl - ttl / 4 - Date.now()));
  await held.release();
  const lease: Lease = await waiting;
  // C contends while B holds and renews: it must wait out its whole wait and get nothing.
  const cOutcome = await c.acquire(name, { ttl, wait: 2 * ttl + 1000 }).then(
    async (stolen) => {
      await stolen.release();
      return `acquired the lock (B had noticed a loss: ${lease.onLost.aborted})`;
    },
    (error: { code?: string }) => error.code ?? String(error),
  );
  const bLost = lease.onLost.aborted;
  await lease.release();
  return { cOutcome, bLost };
}

(entry ? describe : describe.skip)('Consul: a contender that wins late in its session’s life', () => {
  test('keeps the lock, and a third contender waits (lockDelay 0 and 1 s)', async () => {
    // Both variants at once, on their own lock names, to keep the wall time near one run (≈13 s).
    const [noDelay, oneSecond] = await Promise.all([lateWin(0), lateWin(1000)]);
    console.log(
      `lockDelay 0: C ${noDelay.cOutcome}, B lost ${noDelay.bLost}; lockDelay 1 s: C ${oneSecond.cOutcome}, B lost ${oneSecond.bLost}`,
    );
    expect(noDelay).toEqual({ cOutcome: 'MUSTER_TIMEOUT', bLost: false });
    expect(oneSecond).toEqual({ cOutcome: 'MUSTER_TIMEOUT', bLost: false });
  }, 60_000);
});
