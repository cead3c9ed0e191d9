// LeaseLockBackend against an in-memory Lease API with real optimistic concurrency: the paths the
// conformance kit does not force (a metadata-only write between renewals, a takeover seen on
// renew, a deleted or recreated Lease, release after someone else took over, foreign spec fields).
import { describe, expect, test } from '@jest/globals';
import { KubernetesError, type KubeClient } from '../src/client.js';
import type { LeaseObject } from '../src/lease-record.js';
import { LeaseLockBackend } from '../src/lock.js';

class FakeLeases {
  readonly objects = new Map<string, LeaseObject>();
  #rv = 0;
  #uid = 0;
  readonly client = {
    get: async (_r: unknown, name: string) => structuredClone(this.objects.get(name)),
    create: async (_r: unknown, body: LeaseObject) => {
      const name = body.metadata!.name!;
      if (this.objects.has(name)) throw new KubernetesError('create', 'leases', 'exists', { status: 409, reason: 'AlreadyExists' });
      return this.#store({ ...structuredClone(body), metadata: { ...body.metadata, uid: `uid-${++this.#uid}` } });
    },
    replace: async (_r: unknown, body: LeaseObject) => {
      const current = this.objects.get(body.metadata!.name!);
      if (!current) throw new KubernetesError('update', 'leases', 'not found', { status: 404, reason: 'NotFound' });
      if (
        current.metadata!.resourceVersion !== body.metadata!.resourceVersion ||
        current.metadata!.uid !== (body.metadata!.uid ?? current.metadata!.uid)
      ) {
        throw new KubernetesError('update', 'leases', 'conflict', { status: 409, reason: 'Conflict' });
      }
      return this.#store(structuredClone(body));
    },
    close: () => {},
  } as unknown as KubeClient;

  #store(lease: LeaseObject): LeaseObject {
    lease.metadata = { ...lease.metadata, resourceVersion: String(++this.#rv) };
    this.objects.set(lease.metadata.name!, lease);
    return structuredClone(lease);
  }

  /** Another writer changes the Lease (a label, or the spec). */
  touch(name: string, change: (lease: LeaseObject) => void): void {
    const lease = structuredClone(this.objects.get(name)!);
    change(lease);
    this.#store(lease);
  }
}

const call = () => ({ ttl: 3000, signal: new AbortController().signal });

describe('LeaseLockBackend', () => {
  test('a metadata-only write between renewals is no loss: renew re-reads and goes on', async () => {
    const api = new FakeLeases();
    const me = new LeaseLockBackend({ client: api.client, holder: 'me' });
    const grant = (await me.tryAcquire('job', call()))!;
    expect(grant.token).toBe(0n);
    api.touch('job', (l) => (l.metadata!.labels = { ...l.metadata!.labels, team: 'x' }));
    const renewed = await me.renew('job', grant, call());
    expect(renewed.token).toBe(0n);
    expect(api.objects.get('job')!.metadata!.labels).toMatchObject({ team: 'x' });
    expect(api.objects.get('job')!.spec!.holderIdentity).toBe('me');
  });

  test('a takeover seen on renew is LockLostError naming the new holder', async () => {
    const api = new FakeLeases();
    const me = new LeaseLockBackend({ client: api.client, holder: 'me' });
    const grant = (await me.tryAcquire('job', call()))!;
    api.touch('job', (l) => (l.spec = { ...l.spec, holderIdentity: 'go-controller', leaseTransitions: 1 }));
    await expect(me.renew('job', grant, call())).rejects.toMatchObject({
      code: 'MUSTER_LOCK_LOST',
      message: expect.stringContaining("'go-controller' holds the Lease now"),
    });
  });

  test('a deleted or recreated Lease is lost', async () => {
    const api = new FakeLeases();
    const me = new LeaseLockBackend({ client: api.client, holder: 'me' });
    const grant = (await me.tryAcquire('job', call()))!;
    api.objects.delete('job');
    await expect(me.renew('job', grant, call())).rejects.toMatchObject({
      code: 'MUSTER_LOCK_LOST',
      message: expect.stringContaining('deleted'),
    });
    const again = (await me.tryAcquire('job2', call()))!;
    const old = api.objects.get('job2')!;
    api.objects.set('job2', { ...old, metadata: { ...old.metadata, uid: 'someone-else', resourceVersion: '999' } });
    await expect(me.renew('job2', again, call())).rejects.toMatchObject({ message: expect.stringContaining('deleted and created again') });
  });

  test('a held Lease is not taken; a second tryAcquire by the holder is refused (not re-entrant)', async () => {
    const api = new FakeLeases();
    const now = { t: 1_000_000 };
    const clock = { now: () => now.t };
    const a = new LeaseLockBackend({ client: api.client, holder: 'a', clock });
    const b = new LeaseLockBackend({ client: api.client, holder: 'b', clock });
    expect(await a.tryAcquire('job', call())).toBeDefined();
    expect(await a.tryAcquire('job', call())).toBeUndefined();
    expect(await b.tryAcquire('job', call())).toBeUndefined(); // first sighting: wait the published 3 s
    now.t += 2999;
    expect(await b.tryAcquire('job', call())).toBeUndefined();
    now.t += 1;
    const taken = (await b.tryAcquire('job', call()))!;
    expect(taken.token).toBe(1n);
    expect(api.objects.get('job')!.spec).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1, leaseDurationSeconds: 3 });
  });

  test('release after somebody else took over leaves their record alone', async () => {
    const api = new FakeLeases();
    const me = new LeaseLockBackend({ client: api.client, holder: 'me' });
    const grant = (await me.tryAcquire('job', call()))!;
    api.touch('job', (l) => (l.spec = { ...l.spec, holderIdentity: 'other', leaseTransitions: 5 }));
    await me.release('job', grant, { signal: new AbortController().signal });
    expect(api.objects.get('job')!.spec).toMatchObject({ holderIdentity: 'other', leaseTransitions: 5 });
  });

  test('release writes an empty holder and 1 s, keeps leaseTransitions and fields it does not manage', async () => {
    const api = new FakeLeases();
    api.objects.set('job', {
      metadata: { name: 'job', uid: 'u', resourceVersion: '1' },
      spec: { holderIdentity: '', leaseTransitions: 7, strategy: 'OldestEmulationVersion' } as LeaseObject['spec'],
    });
    const me = new LeaseLockBackend({ client: api.client, holder: 'me' });
    const grant = (await me.tryAcquire('job', call()))!;
    expect(grant.token).toBe(8n);
    await me.release('job', grant, { signal: new AbortController().signal });
    expect(api.objects.get('job')!.spec).toMatchObject({
      holderIdentity: '',
      leaseDurationSeconds: 1,
      leaseTransitions: 8,
      strategy: 'OldestEmulationVersion',
    });
  });

  test('lock names that cannot be Lease names are refused with the rule', async () => {
    const me = new LeaseLockBackend({ client: new FakeLeases().client, holder: 'me' });
    await expect(me.tryAcquire('My_Lock', call())).rejects.toThrow(/gives Lease name 'My_Lock', which Kubernetes refuses/);
  });
});
