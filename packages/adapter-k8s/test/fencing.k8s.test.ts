// Fencing tokens and Lease durations against the real API server: tokens handed out after the
// Lease is deleted between holders, or edited by hand, are above every token before (where
// leaseTransitions starts again at 0), and the published leaseDurationSeconds is the ttl asked for.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as k8s from '@kubernetes/client-node';
import { createMuster, type Muster } from '@muster/core';
import { connect } from '../src/client.js';
import { LeaseLockBackend } from '../src/lock.js';
import { adminConfig, createNamespace, deleteNamespace, entry } from './k8s-testenv.js';

const describeK8s = entry ? describe : describe.skip;
let namespace = '';
const musters: Muster[] = [];

async function lockPort(options: Record<string, unknown> = {}) {
  const muster = await createMuster({ lock: { adapter: 'kubernetes', options: { kubeconfig: entry!.kubeconfig, namespace, ...options } } });
  musters.push(muster);
  return muster.lock;
}

const coordination = () => adminConfig().makeApiClient(k8s.CoordinationV1Api);
const readLease = (name: string) => coordination().readNamespacedLease({ name, namespace });

describeK8s('Lease lock fencing tokens and durations (real API server)', () => {
  beforeAll(async () => {
    namespace = await createNamespace('muster-fencing');
  });
  afterAll(async () => {
    await Promise.allSettled(musters.map((m) => m.close()));
    if (namespace) await deleteNamespace(namespace);
  });

  test('tokens after the Lease is deleted between holders are greater than every token before', async () => {
    const [a, b] = [await lockPort(), await lockPort()];
    const name = 'fenced';
    const before: bigint[] = [];
    for (const lock of [a, b, a]) {
      const lease = await lock.acquire(name, { ttl: 2000, wait: 10_000 });
      before.push(lease.token);
      await lease.release();
    }
    expect((await readLease(name)).spec?.leaseTransitions).toBe(2);
    await coordination().deleteNamespacedLease({ name, namespace });

    // A process that never saw the old Lease: only the backend and the clock can order its token.
    const fresh = await lockPort();
    const first = await fresh.acquire(name, { ttl: 2000, wait: 10_000 });
    expect((await readLease(name)).spec?.leaseTransitions).toBe(0); // the count started over ...
    expect(first.token).toBeGreaterThan(before.reduce((x, y) => (y > x ? y : x))); // ... the token did not
    await first.release();
    // And the holders from before count on above it.
    const next = await b.acquire(name, { ttl: 2000, wait: 10_000 });
    expect(next.token).toBeGreaterThan(first.token);
    await next.release();
    console.log(`tokens before deletion ${before.join(', ')}; after ${first.token}, ${next.token}`);
  }, 60_000);

  test('a Lease edited by hand under its holder (another holder, its token lowered, leaseTransitions reset): the holder loses it at its next renewal, and the next token is above the old one', async () => {
    const [a, b] = [await lockPort(), await lockPort()];
    const name = 'edited-by-hand';
    const ttl = 2000;
    const held = await a.acquire(name, { ttl });
    const lease = await readLease(name);
    const annotations = { ...lease.metadata?.annotations, 'muster.io/fencing-token': '1' };
    await coordination().replaceNamespacedLease({
      name,
      namespace,
      body: {
        ...lease,
        metadata: { ...lease.metadata, annotations },
        spec: { ...lease.spec, holderIdentity: 'mallory', leaseTransitions: 0 },
      },
    });
    // Its next renewal (a retry period, 267 ms) finds another holder: lost well before its ttl.
    const lost = await new Promise<unknown>((resolve) => {
      const timer = setTimeout(() => resolve('still held'), ttl);
      held.onLost.addEventListener(
        'abort',
        () => {
          clearTimeout(timer);
          resolve(held.onLost.reason);
        },
        { once: true },
      );
    });
    expect(String((lost as Error)?.message ?? lost)).toMatch(/'mallory' holds the Lease now/);
    // A process that only ever saw the lowered token: its wall clock still orders it above the old holder.
    const next = await b.acquire(name, { ttl, wait: 15_000 });
    expect(next.token).toBeGreaterThan(held.token);
    expect((await readLease(name)).spec?.leaseTransitions).toBe(1);
    await next.release();
  }, 60_000);

  test('a Lease recreated by a fresh client whose wall clock is 60 s behind: the API server’s creationTimestamp keeps its token above the old one', async () => {
    const client = await connect({ kubeconfig: entry!.kubeconfig, namespace, baseDir: process.cwd(), describe: String });
    try {
      const call = () => ({ ttl: 2000, signal: AbortSignal.timeout(10_000) });
      const onTime = new LeaseLockBackend({ client, holder: 'on-time' });
      const before = (await onTime.tryAcquire('behind', call()))!;
      await onTime.release('behind', before, call());
      await coordination().deleteNamespacedLease({ name: 'behind', namespace });
      // The server's stamp has whole seconds: wait (on this machine's clock, the server's too) for the next one.
      const second = Math.floor(Number(before.token / 1000n) / 1000);
      while (Math.floor(Date.now() / 1000) <= second) await new Promise((r) => setTimeout(r, 50));
      const behind = new LeaseLockBackend({ client, holder: 'behind', wallClock: () => Date.now() - 60_000 });
      const after = (await behind.tryAcquire('behind', call()))!;
      expect(after.token).toBeGreaterThan(before.token);
      expect((await readLease('behind')).metadata?.annotations?.['muster.io/fencing-token']).toBe(after.token.toString());
      await behind.renew('behind', after, call());
      await behind.release('behind', after, call());
    } finally {
      client.close();
    }
  }, 30_000);

  test('the published leaseDurationSeconds is the ttl: 4000 ms → 4, 10000 ms → 10, the adapter default 4s → 4', async () => {
    const lock = await lockPort();
    const byDefault = await lockPort({ ttl: '4s' });
    const four = await lock.acquire('ttl-4000', { ttl: 4000 });
    const ten = await lock.acquire('ttl-10000', { ttl: 10_000 });
    const fallback = await byDefault.acquire('ttl-default');
    try {
      expect((await readLease('ttl-4000')).spec?.leaseDurationSeconds).toBe(4);
      expect((await readLease('ttl-10000')).spec?.leaseDurationSeconds).toBe(10);
      expect((await readLease('ttl-default')).spec?.leaseDurationSeconds).toBe(4);
    } finally {
      await Promise.all([four.release(), ten.release(), fallback.release()]);
    }
  }, 30_000);
});
