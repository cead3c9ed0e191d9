// LeaseLockBackend against an in-memory Lease API with real optimistic concurrency: the paths the
// conformance kit does not force (a metadata-only write between renewals, a takeover seen on
// renew, a deleted or recreated Lease, release after someone else took over, foreign spec fields),
// and the fencing token across deletion and client-go holders, on injected wall clocks.
import { describe, expect, jest, test } from '@jest/globals';
import { eventually } from '@muster/core/testing';
import { KubernetesError, leases, type KubeClient } from '../src/client.js';
import type { LeaseObject } from '../src/lease-record.js';
import { fencingTokenAnnotation } from '../src/lease-record.js';
import { LeaseLockBackend } from '../src/lock.js';

class FakeLeases {
  readonly objects = new Map<string, LeaseObject>();
  /** The API server's wall clock (ms): stamps creationTimestamp as it does, in whole seconds. Unset: no stamp. */
  serverMs: number | undefined;
  #rv = 0;
  #uid = 0;
  /**
   * The next create or replace is applied, but its answer is lost (an abort, a cut connection);
   * a function runs first, as another writer right behind it.
   */
  loseNextAnswer: boolean | (() => void) = false;
  readonly client = {
    get: async (_r: unknown, name: string) => structuredClone(this.objects.get(name)),
    create: async (_r: unknown, body: LeaseObject) => this.#answer(this.#create(body)),
    replace: async (_r: unknown, body: LeaseObject) => this.#answer(this.#replace(body)),
    close: () => {},
  } as unknown as KubeClient;

  #answer(written: LeaseObject): LeaseObject {
    const lose = this.loseNextAnswer;
    if (lose === false) return written;
    this.loseNextAnswer = false;
    if (typeof lose === 'function') lose();
    throw new DOMException('This operation was aborted', 'AbortError');
  }

  #create(body: LeaseObject): LeaseObject {
    const name = body.metadata!.name!;
    if (this.objects.has(name)) throw new KubernetesError('create', 'leases', 'exists', { status: 409, reason: 'AlreadyExists' });
    const stamp = this.serverMs === undefined ? {} : { creationTimestamp: new Date(this.serverMs).toISOString().replace(/\.\d+Z$/, 'Z') };
    return this.#store({ ...structuredClone(body), metadata: { ...body.metadata, ...stamp, uid: `uid-${++this.#uid}` } });
  }

  #replace(body: LeaseObject): LeaseObject {
    const current = this.objects.get(body.metadata!.name!);
    if (!current) throw new KubernetesError('update', 'leases', 'not found', { status: 404, reason: 'NotFound' });
    if (
      current.metadata!.resourceVersion !== body.metadata!.resourceVersion ||
      current.metadata!.uid !== (body.metadata!.uid ?? current.metadata!.uid)
    ) {
      throw new KubernetesError('update', 'leases', 'conflict', { status: 409, reason: 'Conflict' });
    }
    return this.#store(structuredClone(body));
  }

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
const signal = () => new AbortController().signal;
/** A wall clock (ms since the epoch) set by hand. */
const wall = (ms: number) => {
  const clock = { ms, now: () => clock.ms };
  return clock;
};

describe('LeaseLockBackend', () => {
  test('a metadata-only write between renewals is no loss: renew re-reads and goes on', async () => {
    const api = new FakeLeases();
    const me = new LeaseLockBackend({ client: api.client, holder: 'me', wallClock: () => 5 });
    const grant = (await me.tryAcquire('job', call()))!;
    expect(grant.token).toBe(5000n); // the wall clock in µs: the first token of a new Lease
    api.touch('job', (l) => (l.metadata!.labels = { ...l.metadata!.labels, team: 'x' }));
    const renewed = await me.renew('job', grant, call());
    expect(renewed.token).toBe(5000n);
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
    const a = new LeaseLockBackend({ client: api.client, holder: 'a', clock, wallClock: () => 7 });
    const b = new LeaseLockBackend({ client: api.client, holder: 'b', clock, wallClock: () => 7 });
    expect((await a.tryAcquire('job', call()))?.token).toBe(7000n);
    expect(await a.tryAcquire('job', call())).toBeUndefined();
    expect(await b.tryAcquire('job', call())).toBeUndefined(); // first sighting: wait the published 3 s
    now.t += 2999;
    expect(await b.tryAcquire('job', call())).toBeUndefined();
    now.t += 1;
    const taken = (await b.tryAcquire('job', call()))!;
    expect(taken.token).toBe(7001n); // the clock did not move: previous + 1
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

  test('release writes an empty holder and 1 s, keeps leaseTransitions, the token and fields it does not manage', async () => {
    const api = new FakeLeases();
    api.objects.set('job', {
      metadata: { name: 'job', uid: 'u', resourceVersion: '1', annotations: { 'example.com/owner': 'ops' } },
      spec: { holderIdentity: '', leaseTransitions: 7, strategy: 'OldestEmulationVersion' } as LeaseObject['spec'],
    });
    const me = new LeaseLockBackend({ client: api.client, holder: 'me', wallClock: () => 9 });
    const grant = (await me.tryAcquire('job', call()))!;
    expect(grant.token).toBe(9000n); // a Lease without the annotation (an older Muster, client-go): the clock floor
    await me.release('job', grant, { signal: signal() });
    expect(api.objects.get('job')!.metadata!.annotations).toEqual({ 'example.com/owner': 'ops', [fencingTokenAnnotation]: '9000' });
    expect(api.objects.get('job')!.spec).toMatchObject({
      holderIdentity: '',
      leaseDurationSeconds: 1,
      leaseTransitions: 8,
      strategy: 'OldestEmulationVersion',
    });
  });

  test('acquireTime and renewTime are wall-clock time (what client-go and kubectl read), not the lock’s monotonic clock', async () => {
    // A process that lived through a wall-clock step has a monotonic clock far from the wall: the
    // stamps it writes must still be the wall's, or a client-go reader sees a Lease taken before it died.
    const api = new FakeLeases();
    const wallMs = Date.UTC(2026, 11, 4, 12, 0, 0);
    const monotonic = { now: () => wallMs - 3_600_000 };
    const me = new LeaseLockBackend({ client: api.client, holder: 'me', clock: monotonic, wallClock: () => wallMs });
    const stamps = () => [api.objects.get('job')!.spec!.acquireTime, api.objects.get('job')!.spec!.renewTime];
    const wallStamp = '2026-12-04T12:00:00.000000Z';
    const grant = (await me.tryAcquire('job', call()))!;
    expect(stamps()).toEqual([wallStamp, wallStamp]);
    await me.renew('job', grant, call());
    expect(stamps()).toEqual([wallStamp, wallStamp]);
    await me.release('job', grant, { signal: signal() });
    expect(stamps()).toEqual([wallStamp, wallStamp]);
  });

  test('an API server that cannot be reached: an acquire that never connected starts no give-back; a read that fails while giving back is tried again, without a warning', async () => {
    const refused = () =>
      new KubernetesError('get', 'leases', 'cannot reach the API server (ECONNREFUSED)', {
        cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
      });
    const warnings = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    try {
      // The server goes away between the acquire's read and its write.
      const api = new FakeLeases();
      let up = true;
      let readsWhileDown = 0;
      const down = {
        ...api.client,
        get: async (r: unknown, name: string) => (up ? api.client.get(r as never, name) : (readsWhileDown++, Promise.reject(refused()))),
        create: async () => {
          up = false;
          throw refused();
        },
      } as unknown as KubeClient;
      const me = new LeaseLockBackend({ client: down, holder: 'me' });
      await expect(me.tryAcquire('job', call())).rejects.toThrow('ECONNREFUSED');
      await me.close();
      expect(readsWhileDown).toBe(0); // nothing was sent, so nothing is watched for
      // The write landed, its answer was lost, and the first read of the give-back fails: the next one releases.
      const flaky = new FakeLeases();
      let reads = 0;
      const client = {
        ...flaky.client,
        get: async (r: unknown, name: string) => (++reads === 2 ? Promise.reject(refused()) : flaky.client.get(r as never, name)),
      } as unknown as KubeClient;
      const again = new LeaseLockBackend({ client, holder: 'me' });
      flaky.loseNextAnswer = true;
      await expect(again.tryAcquire('job', call())).rejects.toThrow('aborted');
      await eventually('the Lease to be given back', async () => flaky.objects.get('job')?.spec?.holderIdentity === '' || undefined, 5000);
      await again.close();
      expect(warnings).not.toHaveBeenCalled();
    } finally {
      warnings.mockRestore();
    }
  });

  test('an acquire write whose answer is lost (abort, cut connection) gives the Lease back if it landed; a write of another is left alone', async () => {
    for (const existing of [false, true]) {
      const api = new FakeLeases();
      const me = new LeaseLockBackend({ client: api.client, holder: 'me' });
      if (existing) await me.release('job', (await me.tryAcquire('job', call()))!, { signal: signal() }); // a Lease to replace
      api.loseNextAnswer = true;
      await expect(me.tryAcquire('job', call())).rejects.toThrow('aborted');
      await me.close(); // waits for the give-back
      expect({ existing, spec: api.objects.get('job')!.spec }).toMatchObject({
        existing,
        spec: { holderIdentity: '', leaseDurationSeconds: 1 },
      });
    }
    // Another contender wrote after the lost answer: its record stays.
    const api = new FakeLeases();
    const me = new LeaseLockBackend({ client: api.client, holder: 'me' });
    api.loseNextAnswer = () => api.touch('job', (l) => (l.spec = { ...l.spec, holderIdentity: 'other' }));
    await expect(me.tryAcquire('job', call())).rejects.toThrow('aborted');
    await me.close();
    expect(api.objects.get('job')!.spec).toMatchObject({ holderIdentity: 'other', leaseDurationSeconds: 3 });
    // This client acquired again (a retry) with a later token: that grant is not given back.
    const again = new FakeLeases();
    const retrying = new LeaseLockBackend({ client: again.client, holder: 'me' });
    again.loseNextAnswer = () => again.touch('job', (l) => (l.metadata!.annotations = { [fencingTokenAnnotation]: '9'.repeat(20) }));
    await expect(retrying.tryAcquire('job', call())).rejects.toThrow('aborted');
    await retrying.close();
    expect(again.objects.get('job')!.spec).toMatchObject({ holderIdentity: 'me', leaseDurationSeconds: 3 });
  });

  test('lock names that cannot be Lease names are refused with the rule', async () => {
    const me = new LeaseLockBackend({ client: new FakeLeases().client, holder: 'me' });
    await expect(me.tryAcquire('My_Lock', call())).rejects.toThrow(/gives Lease name 'My_Lock', which Kubernetes refuses/);
  });

  test('a Lease deleted and created again: tokens continue above the old ones (wall-clock floor, then what this process saw)', async () => {
    const api = new FakeLeases();
    const clock = wall(1_000);
    const a = new LeaseLockBackend({ client: api.client, holder: 'a', wallClock: clock.now });
    const before: bigint[] = [];
    for (let i = 0; i < 3; i++) {
      const grant = (await a.tryAcquire('job', call()))!;
      before.push(grant.token);
      await a.release('job', grant, { signal: signal() });
    }
    expect(before).toEqual([1_000_000n, 1_000_001n, 1_000_002n]); // same millisecond: previous + 1
    api.objects.delete('job'); // leaseTransitions and the annotation are gone with it

    // A new process, whose clock moved on: the floor puts it above every token of the deleted Lease.
    clock.ms = 1_001;
    const b = new LeaseLockBackend({ client: api.client, holder: 'b', wallClock: clock.now });
    const after = (await b.tryAcquire('job', call()))!;
    expect(after.token).toBe(1_001_000n);
    expect(api.objects.get('job')!.spec!.leaseTransitions).toBe(0);
    await b.release('job', after, { signal: signal() });

    // A process whose clock is behind, on a Lease deleted again: it still counts on from what it saw.
    api.objects.delete('job');
    clock.ms = 0;
    const again = (await b.tryAcquire('job', call()))!;
    expect(again.token).toBe(1_001_001n);
  });

  test('a Lease deleted and created again by a host whose clock is 60 s behind: the API server’s creationTimestamp raises its token above the old ones', async () => {
    const api = new FakeLeases();
    const t = 1_800_000_000_250; // ms since the epoch, mid-second
    api.serverMs = t;
    const a = new LeaseLockBackend({ client: api.client, holder: 'a', wallClock: () => t });
    const first = (await a.tryAcquire('job', call()))!;
    expect(first.token).toBe(BigInt(t) * 1000n); // on time: its own clock
    await a.release('job', first, { signal: signal() });
    api.objects.delete('job');

    // Two seconds later a fresh process (it never saw the old Lease) on a clock 60 s behind creates it again.
    api.serverMs = t + 2000;
    const behind = new LeaseLockBackend({ client: api.client, holder: 'behind', wallClock: () => t + 2000 - 60_000 });
    const second = (await behind.tryAcquire('job', call()))!;
    expect(second.token).toBeGreaterThan(first.token);
    expect(second.token).toBe(BigInt(Math.floor((t + 2000) / 1000) * 1000) * 1000n); // the stamp, in µs
    expect(api.objects.get('job')!.metadata!.annotations![fencingTokenAnnotation]).toBe(second.token.toString());
    // The grant's Lease is the raised one: renewing and releasing it work.
    await behind.renew('job', second, call());
    const next = (await a.tryAcquire('job', call())) ?? undefined;
    expect(next).toBeUndefined(); // held
    await behind.release('job', second, { signal: signal() });
    const third = (await a.tryAcquire('job', call()))!;
    expect(third.token).toBe(second.token + 1n);
  });

  test('a Lease recreated by a foreign holder (no token annotation) and taken over by a host whose clock is 60 s behind: its creationTimestamp keeps the token above the old ones', async () => {
    const api = new FakeLeases();
    const t = 1_800_000_000_250;
    api.serverMs = t;
    const a = new LeaseLockBackend({ client: api.client, holder: 'a', wallClock: () => t });
    const first = (await a.tryAcquire('job', call()))!;
    await a.release('job', first, { signal: signal() });
    api.objects.delete('job');

    // Someone else (client-go, no annotation) creates it two seconds later and releases it.
    api.serverMs = t + 2000;
    await api.client.create(leases, { metadata: { name: 'job' }, spec: { holderIdentity: '', leaseDurationSeconds: 1 } });
    // A fresh process on a clock 60 s behind takes the free Lease over: the replace path.
    const behind = new LeaseLockBackend({ client: api.client, holder: 'behind', wallClock: () => t + 2000 - 60_000 });
    const taken = (await behind.tryAcquire('job', call()))!;
    expect(taken.token).toBeGreaterThan(first.token);
  });

  test('a client-go holder between two Muster holders keeps the annotation: the token counts on across it', async () => {
    const api = new FakeLeases();
    const a = new LeaseLockBackend({ client: api.client, holder: 'a', wallClock: () => 50 });
    const first = (await a.tryAcquire('job', call()))!;
    await a.release('job', first, { signal: signal() });
    // client-go's LeaseLock updates the object it read: spec replaced, metadata kept.
    api.touch('job', (l) => (l.spec = { ...l.spec, holderIdentity: 'go', leaseTransitions: (l.spec!.leaseTransitions ?? 0) + 1 }));
    api.touch('job', (l) => (l.spec = { ...l.spec, holderIdentity: '', leaseDurationSeconds: 1 }));
    // Even with a wall clock far behind, the next Muster holder is above the last one.
    const b = new LeaseLockBackend({ client: api.client, holder: 'b', wallClock: () => 0 });
    const second = (await b.tryAcquire('job', call()))!;
    expect(second.token).toBe(first.token + 1n);
    expect(api.objects.get('job')!.metadata!.annotations![fencingTokenAnnotation]).toBe(String(second.token));
  });

  test('a takeover by another Muster holder between renewals is seen through the token', async () => {
    const api = new FakeLeases();
    const me = new LeaseLockBackend({ client: api.client, holder: 'me', wallClock: () => 1 });
    const grant = (await me.tryAcquire('job', call()))!;
    // Lost and taken back by the same identity elsewhere (a restarted process with a fixed holder).
    api.touch('job', (l) => (l.metadata!.annotations = { ...l.metadata!.annotations, [fencingTokenAnnotation]: '99999' }));
    await expect(me.renew('job', grant, call())).rejects.toMatchObject({ message: expect.stringContaining('changed hands') });
  });

  test('a refused contender waits no longer than until the holder expires as observed, then takes the Lease', async () => {
    const api = new FakeLeases();
    const now = { t: 1_000_000 };
    const clock = { now: () => now.t };
    const a = new LeaseLockBackend({ client: api.client, holder: 'a', clock });
    const b = new LeaseLockBackend({ client: api.client, holder: 'b', clock });
    await a.tryAcquire('job', call());
    expect(await b.tryAcquire('job', call())).toBeUndefined(); // observed now: free 3 s from now
    now.t += 2999;
    // Offered a 10-minute wait, it returns when the Lease expires (1 ms on this clock), not after the wait.
    await b.waitForChange('job', { signal: signal(), maxWaitMs: 600_000 });
    now.t += 1;
    expect(await b.tryAcquire('job', call())).toBeDefined();
  });

  test('an annotation that is not a token (an operator edit) is ignored: the clock floor orders the next one', async () => {
    const api = new FakeLeases();
    api.objects.set('job', {
      metadata: { name: 'job', uid: 'u', resourceVersion: '1', annotations: { [fencingTokenAnnotation]: 'not-a-number' } },
      spec: { holderIdentity: '' },
    });
    const me = new LeaseLockBackend({ client: api.client, holder: 'me', wallClock: () => 3 });
    expect((await me.tryAcquire('job', call()))?.token).toBe(3000n);
  });
});
