// When a watcher first sees a member: a record in the first view of a watch (a catch-up of unknown
// age) counts from the writer's timestamp, so a long-dead member is not shown alive for one more
// ttl; a record that appears in a running watch was written just now and counts from when it was
// observed, unless its writer's side already says it is stale (a re-list inside the stream). The k8s chaos run (seed 20261205, load ~16 on 2 cores) showed a fresh member whose
// first beat took most of its ttl arrive already stale: its renewTime is taken when the write starts.
import { describe, expect, it } from '@jest/globals';
import type { HeartbeatEvent, MemberHeartbeat } from '../src/index.js';
import { createHeartbeatStore, type HeartbeatBackend, type HeartbeatRecord } from '../src/adapter.js';
import { nextMatching, nextWithin } from '../src/testing/index.js';

/** A backend whose watch yields exactly the views the test pushes. */
function scriptedBackend() {
  const queue: HeartbeatRecord[][] = [];
  let wake: (() => void) | undefined;
  const backend: HeartbeatBackend = {
    write: async () => undefined,
    read: async () => undefined,
    list: async () => [],
    remove: async () => undefined,
    async *views(_group, { signal }) {
      while (!signal.aborted) {
        const view = queue.shift();
        if (view) yield view;
        else
          await new Promise<void>((resolve) => {
            wake = resolve;
            signal.addEventListener('abort', () => resolve(), { once: true });
          });
      }
    },
  };
  const push = (view: HeartbeatRecord[]) => {
    queue.push(view);
    wake?.();
  };
  return { backend, push };
}

const record = (memberId: string, renewedAt: number, ttl: number): HeartbeatRecord => ({
  memberId,
  group: 'g',
  payload: null,
  ttl,
  incarnation: 'i1',
  version: '1',
  renewedAt,
});

const member = (e: HeartbeatEvent, id: string): MemberHeartbeat | undefined => e.members.find((m) => m.memberId === id);

describe('heartbeat watch: first sighting of a member', () => {
  it('a member that appears in a running watch counts from when it was observed, not from its slow write', async () => {
    const ttl = 60_000;
    let now = 1_000_000;
    const { backend, push } = scriptedBackend();
    const store = createHeartbeatStore(backend, { clock: { now: () => now } });
    const watch = store.watch('g')[Symbol.asyncIterator]();
    push([]);
    await nextWithin(watch, 5000, 'snapshot');
    // The member's first write started 90 % of a ttl ago (its renewTime) and lands only now.
    now += ttl;
    push([record('m', now - 0.9 * ttl, ttl)]);
    const joined = await nextMatching(watch, (e) => e.type === 'joined', 5000, 'joined');
    expect(member(joined, 'm')).toMatchObject({ alive: true, lastSeen: now });
    await watch.return?.();
    await store.close();
  });

  it('a member already in the first view counts from its writer’s timestamp (it may have died long ago)', async () => {
    const ttl = 60_000;
    const now = 1_000_000;
    const { backend, push } = scriptedBackend();
    const store = createHeartbeatStore(backend, { clock: { now: () => now } });
    const watch = store.watch('g')[Symbol.asyncIterator]();
    push([record('old', now - 2 * ttl, ttl), record('recent', now - 1000, ttl)]);
    const snapshot = await nextWithin(watch, 5000, 'snapshot');
    expect(member(snapshot, 'old')).toMatchObject({ alive: false, lastSeen: now - 2 * ttl });
    expect(member(snapshot, 'recent')).toMatchObject({ alive: true, lastSeen: now - 1000 });
    await watch.return?.();
    await store.close();
  });

  it('a record that first appears in a running watch but whose writer last beat over a ttl ago stays stale (a re-list after a gap, a restored snapshot)', async () => {
    const ttl = 60_000;
    let now = 1_000_000;
    const { backend, push } = scriptedBackend();
    const store = createHeartbeatStore(backend, { clock: { now: () => now } });
    const watch = store.watch('g')[Symbol.asyncIterator]();
    push([]);
    await nextWithin(watch, 5000, 'snapshot');
    // The Kubernetes store re-lists after 410 Gone inside the same stream: a member created during
    // the gap that then died shows up with its last beat two ttls old.
    now += 3 * ttl;
    push([record('gone', now - 2 * ttl, ttl)]);
    const joined = await nextMatching(watch, (e) => e.type === 'joined', 5000, 'joined');
    expect(member(joined, 'gone')).toMatchObject({ alive: false, lastSeen: now - 2 * ttl });
    await watch.return?.();
    await store.close();
  });

  it('a writer’s timestamp is aged on the wall clock: a local clock stepped away from the wall neither revives the dead nor buries the living', async () => {
    // The monotonic clock drifts from the wall by every step the host took since this process
    // started (an NTP step, a VM resumed): a writer's wall stamp compared with it is off by that much.
    const ttl = 10_000;
    const wall = Date.UTC(2026, 11, 4, 12, 0, 0);
    for (const step of [-3_600_000, 3_600_000]) {
      const now = wall + step;
      const { backend, push } = scriptedBackend();
      const store = createHeartbeatStore(backend, { clock: { now: () => now, wall: () => wall } });
      const watch = store.watch('g')[Symbol.asyncIterator]();
      push([record('dead', wall - 2 * ttl, ttl), record('alive', wall - 1000, ttl)]);
      const snapshot = await nextWithin(watch, 5000, 'snapshot');
      expect({ step, dead: member(snapshot, 'dead'), alive: member(snapshot, 'alive') }).toMatchObject({
        step,
        dead: { alive: false, lastSeen: now - 2 * ttl },
        alive: { alive: true, lastSeen: now - 1000 },
      });
      await watch.return?.();
      await store.close();
    }
  });
});
