// Two deployments share a namespace and tell their heartbeats apart by heartbeatPrefix: each store
// lists, watches, reads and removes exactly the Leases it writes, never the other's.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createMuster, type HeartbeatEvent, type Muster } from '@muster/core';
import { eventually } from '@muster/core/testing';
import { createNamespace, deleteNamespace, entry } from './k8s-testenv.js';

const describeK8s = entry ? describe : describe.skip;
let namespace = '';
const stores: Muster[] = [];
const store = async (heartbeatPrefix: string) => {
  const muster = await createMuster({
    heartbeat: { adapter: 'kubernetes', options: { kubeconfig: entry!.kubeconfig, namespace, heartbeatPrefix } },
  });
  stores.push(muster);
  return muster.heartbeat;
};

describeK8s('heartbeatPrefix separates stores in one namespace', () => {
  beforeAll(async () => {
    namespace = await createNamespace('muster-hb-prefix');
  });
  afterAll(async () => {
    await Promise.all(stores.map((m) => m.close()));
    if (namespace) await deleteNamespace(namespace);
  });

  test("a store neither lists, watches nor removes another store's members", async () => {
    const teamA = await store('team-a-');
    const teamB = await store('team-b-');
    await teamA.beat('a-1', { team: 'a' }, { ttl: 10_000 });
    await teamB.beat('b-1', { team: 'b' }, { ttl: 10_000 });

    expect((await teamA.list()).map((m) => m.memberId)).toEqual(['a-1']);
    expect((await teamB.list()).map((m) => m.memberId)).toEqual(['b-1']);
    await teamA.remove('b-1'); // not A's member: reaches nothing of B's
    expect(await teamB.get('b-1')).toMatchObject({ memberId: 'b-1', payload: { team: 'b' } });

    const events: HeartbeatEvent[] = [];
    const stop = new AbortController();
    const watcher = (async () => {
      for await (const event of teamA.watch(undefined, { signal: stop.signal })) events.push(event);
    })();
    await eventually('the snapshot', async () => (events[0] ? true : undefined), 10_000);
    await teamB.beat('b-2', { team: 'b' }, { ttl: 10_000 });
    await teamA.beat('a-2', { team: 'a' }, { ttl: 10_000 });
    // A's own later beat arrives after B's, so once A sees it, B's beat has been filtered, not missed.
    await eventually('a-2 in the watch', async () => (events.at(-1)?.members.some((m) => m.memberId === 'a-2') ? true : undefined), 10_000);
    stop.abort();
    await watcher;
    const seen = new Set(events.flatMap((e) => e.members.map((m) => m.memberId)));
    expect([...seen].sort()).toEqual(['a-1', 'a-2']);
  });
});
