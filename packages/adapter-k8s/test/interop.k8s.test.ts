// A client-go leader elector (scripts/testenv/k8s-elector, client-go's own leaderelection package)
// and a Muster lock contend for one Lease: each honours the other's hold, takes over after the
// other's release without waiting out the lease, and the fencing token (the muster.io/fencing-token
// annotation, which client-go's updates keep) keeps growing across both.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as k8s from '@kubernetes/client-node';
import { createMuster, type Muster } from '@muster/core';
import { eventually } from '@muster/core/testing';
import { adminConfig, createNamespace, deleteNamespace, entry } from './k8s-testenv.js';
import { startElector as startProbe } from './elector-probe.js';
import { testTool } from '../../../scripts/testenv/optional-tools.mjs';
import { buildElector } from '../../../scripts/testenv/servers/k8s.mjs';

const describeInterop = entry && testTool('k8s-elector') ? describe : describe.skip;

// A MicroTime as the client hands it over (a Date), in ms.
const millis = (time: Date | string | undefined) => (time instanceof Date ? time.getTime() : Date.parse(String(time)));

const startElector = (binary: string, namespace: string, name: string, identity: string) =>
  startProbe(binary, { kubeconfig: entry!.kubeconfig, namespace, name, identity });

describeInterop('client-go leader election and a Muster lock share one Lease', () => {
  let namespace = '';
  let binary = '';
  let muster: Muster | undefined;
  beforeAll(async () => {
    binary = (await buildElector()) as string;
    namespace = await createNamespace('muster-interop');
    muster = await createMuster({
      lock: { adapter: 'kubernetes', options: { kubeconfig: entry!.kubeconfig, namespace, holder: 'muster' } },
    });
  }, 600_000);
  afterAll(async () => {
    await muster?.close();
    if (namespace) await deleteNamespace(namespace);
  });

  test('each side waits for the other and takes over on release', async () => {
    const lock = muster!.lock;
    const name = 'interop';
    const first = await lock.acquire(name, { ttl: 4000 });

    const go = startElector(binary, namespace, name, 'go-elector');
    try {
      // The Go elector sees Muster as the leader and does not take the Lease while it is renewed.
      await eventually(
        'the elector to report the Muster holder',
        async () => (go.events.some((e) => e.event === 'new-leader' && e.identity === first.holder) ? true : undefined),
        10_000,
      );
      await new Promise((r) => setTimeout(r, 6000));
      expect(go.events.some((e) => e.event === 'started-leading')).toBe(false);
      expect(first.onLost.aborted).toBe(false);

      // Muster releases (an empty holder: lock.test.ts checks the record), and client-go takes over.
      // How fast is printed, not asserted: a loaded machine delays the elector's retry.
      const releasedAt = Date.now();
      await first.release();
      await eventually(
        'the elector to lead',
        async () => (go.events.some((e) => e.event === 'started-leading') ? true : undefined),
        30_000,
        20,
      );
      const handover = Date.now() - releasedAt;

      // While client-go holds and renews it, Muster cannot take it; its updates keep Muster's token.
      expect(await lock.tryAcquire(name, { ttl: 4000 })).toBeUndefined();
      const held = await adminConfig().makeApiClient(k8s.CoordinationV1Api).readNamespacedLease({ name, namespace });
      expect(held.spec?.holderIdentity).toBe('go-elector');
      expect(held.metadata?.annotations?.['muster.io/fencing-token']).toBe(String(first.token));
      await new Promise((r) => setTimeout(r, 5000));
      expect(await lock.tryAcquire(name, { ttl: 4000 })).toBeUndefined();

      // client-go releases on SIGTERM (ReleaseOnCancel): Muster gets it at once, with a larger token.
      const waiting = lock.acquire(name, { ttl: 4000, wait: 20_000 });
      const stoppedAt = Date.now();
      go.child.kill('SIGTERM');
      const second = await waiting;
      const takeover = Date.now() - stoppedAt;
      expect(second.token).toBeGreaterThan(first.token);
      console.log(`handover Muster→client-go ${handover} ms, client-go→Muster ${takeover} ms; tokens ${first.token} → ${second.token}`);
      await second.release();
    } finally {
      go.child.kill('SIGTERM');
      await go.exited;
    }
  }, 90_000);

  test('a client-go leader that is killed outright expires after its lease duration, judged on our clock', async () => {
    const lock = muster!.lock;
    const name = 'interop-kill';
    const go = startElector(binary, namespace, name, 'go-killed');
    try {
      await eventually(
        'the elector to lead',
        async () => (go.events.some((e) => e.event === 'started-leading') ? true : undefined),
        15_000,
        20,
      );
      expect(await lock.tryAcquire(name, { ttl: 4000 })).toBeUndefined();
      const killedAt = Date.now();
      go.child.kill('SIGKILL');
      await go.exited;
      // Its last renewal, as the record shows it once it can write no more.
      const leases = adminConfig().makeApiClient(k8s.CoordinationV1Api);
      const dead = (await leases.readNamespacedLease({ name, namespace })).spec!;
      expect(dead.holderIdentity).toBe('go-killed');
      const lease = await lock.acquire(name, { ttl: 4000, wait: 30_000 });
      const takeover = Date.now() - killedAt;
      // No release was written: Muster waits out the duration the holder published, counted from
      // its own sighting of the last renewal, so its takeover is at least that long after the
      // renewal. An order of two times one host wrote, whatever the load; how long it took is printed.
      const taken = (await leases.readNamespacedLease({ name, namespace })).spec!;
      expect(taken.holderIdentity).toBe(lease.holder);
      expect(millis(taken.acquireTime) - millis(dead.renewTime)).toBeGreaterThanOrEqual(dead.leaseDurationSeconds! * 1000);
      console.log(`killed client-go leader → Muster after ${takeover} ms (lease 4 s)`);
      await lease.release();
    } finally {
      go.child.kill('SIGKILL');
      await go.exited;
    }
  }, 60_000);
});
