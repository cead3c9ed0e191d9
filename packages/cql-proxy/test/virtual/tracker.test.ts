import { describe, expect, it } from '@jest/globals';
import type { MemberHeartbeat } from '@muster/core';
import { MembershipTracker, type MembershipUpdate, type Timers } from '../../src/virtual/tracker.js';
import { endpoint, heartbeat, options } from './fixtures.js';

/** A hand-driven clock and timer queue: time moves only when the test says so. */
class ManualTime implements Timers {
  now = 0;
  #timers = new Map<number, { at: number; fn: () => void }>();
  #next = 1;
  readonly clock = { now: () => this.now };

  setTimeout(fn: () => void, ms: number): unknown {
    const id = this.#next++;
    this.#timers.set(id, { at: this.now + ms, fn });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.#timers.delete(handle as number);
  }

  get pending(): number {
    return this.#timers.size;
  }

  advance(ms: number): void {
    const end = this.now + ms;
    for (;;) {
      const due = [...this.#timers].filter(([, t]) => t.at <= end).sort((x, y) => x[1].at - y[1].at)[0];
      if (due === undefined) break;
      this.#timers.delete(due[0]);
      this.now = due[1].at;
      due[1].fn();
    }
    this.now = end;
  }
}

const a = endpoint('proxy-a', '10.0.0.1');
const b = endpoint('proxy-b', '10.0.0.2');
const c = endpoint('proxy-c', '10.0.0.3');

function setup(extra: { flapWindow?: number; maxDelay?: number; removalsImmediate?: boolean } = {}) {
  const time = new ManualTime();
  const updates: MembershipUpdate[] = [];
  const tracker = new MembershipTracker({
    self: { id: 'proxy-a', nativePort: 9042 },
    membership: options,
    flapWindow: 1_000,
    maxDelay: 5_000,
    ...extra,
    clock: time.clock,
    timers: time,
    onUpdate: (u) => updates.push(u),
  });
  const beat = (id: string, extraBeat: Partial<MemberHeartbeat> = {}) => heartbeat(id, { lastSeen: time.now, ...extraBeat });
  const events = () => updates.flatMap((u) => u.events.map((e) => `${e.change} ${e.memberId}`));
  return { time, updates, tracker, beat, events };
}

describe('MembershipTracker', () => {
  it('publishes the first view once both inputs arrived, with no events', () => {
    const { tracker, updates, beat } = setup();
    tracker.setEndpoints([a, b]);
    expect(updates).toEqual([]);
    tracker.setHeartbeats([beat('proxy-a'), beat('proxy-b')]);
    expect(updates).toHaveLength(1);
    expect(updates[0]?.events).toEqual([]);
    expect(tracker.view?.peers.map((p) => p.id)).toEqual(['proxy-b']);
  });

  it('publishes a change after the flap window, the view together with its events', () => {
    const { tracker, updates, time, beat, events } = setup();
    tracker.setEndpoints([a, b]);
    tracker.setHeartbeats([beat('proxy-a'), beat('proxy-b')]);
    tracker.setEndpoints([a, b, c]);
    tracker.setHeartbeats([beat('proxy-a'), beat('proxy-b'), beat('proxy-c')]);
    time.advance(999);
    expect(updates).toHaveLength(1);
    time.advance(1);
    expect(events()).toEqual(['NEW_NODE proxy-c']);
    expect(updates[1]?.view.peers.map((p) => p.id)).toEqual(['proxy-b', 'proxy-c']);
  });

  it('sends nothing for a flap inside the window', () => {
    const { tracker, updates, time, beat } = setup();
    tracker.setEndpoints([a, b]);
    tracker.setHeartbeats([beat('proxy-a'), beat('proxy-b')]);
    tracker.setEndpoints([a, { ...b, ready: false }]);
    time.advance(500);
    tracker.setEndpoints([a, b]);
    time.advance(5_000);
    expect(updates).toHaveLength(1);
  });

  it('does not let constant churn starve clients past maxDelay', () => {
    const { tracker, time, beat, events } = setup();
    tracker.setEndpoints([a, b]);
    tracker.setHeartbeats([beat('proxy-a'), beat('proxy-b')]);
    tracker.setEndpoints([a, { ...b, ready: false }]);
    for (let i = 0; i < 10; i++) {
      time.advance(600);
      tracker.setEndpoints([a, { ...b, ready: false, metadata: { n: String(i) } }]);
    }
    expect(events()).toEqual(['DOWN proxy-b']);
  });

  it('does not restart the quiet period for beats that change nothing visible', () => {
    const { tracker, time, beat, events } = setup();
    tracker.setEndpoints([a, b]);
    tracker.setHeartbeats([beat('proxy-a'), beat('proxy-b')]);
    tracker.setEndpoints([a, { ...b, ready: false }]);
    time.advance(500);
    tracker.setHeartbeats([beat('proxy-a'), beat('proxy-b')]);
    time.advance(500);
    expect(events()).toEqual(['DOWN proxy-b']);
  });

  it('shows self draining in the next view, with no event about self', () => {
    const { tracker, time, beat, updates } = setup();
    tracker.setEndpoints([a, b]);
    tracker.setHeartbeats([beat('proxy-a'), beat('proxy-b')]);
    tracker.setSelf({ id: 'proxy-a', nativePort: 9042, ready: false });
    time.advance(1_000);
    expect(updates).toHaveLength(2);
    expect(updates[1]?.events).toEqual([]);
    expect(updates[1]?.view.self.up).toBe(false);
  });

  it('lets a removal through at once by default, and holds it when told to', () => {
    const quick = setup();
    quick.tracker.setEndpoints([a, b]);
    quick.tracker.setHeartbeats([quick.beat('proxy-a'), quick.beat('proxy-b')]);
    quick.tracker.setEndpoints([a]);
    expect(quick.events()).toEqual(['REMOVED_NODE proxy-b']);
    expect(quick.tracker.view?.peers).toEqual([]);

    const held = setup({ removalsImmediate: false });
    held.tracker.setEndpoints([a, b]);
    held.tracker.setHeartbeats([held.beat('proxy-a'), held.beat('proxy-b')]);
    held.tracker.setEndpoints([a]);
    expect(held.events()).toEqual([]);
    held.tracker.setEndpoints([a, b]); // back within the window: nothing happened
    held.time.advance(2_000);
    expect(held.events()).toEqual([]);
  });

  it('keeps a member UP past lastSeen + ttl while the store says alive (a renewal that changes nothing brings no event)', () => {
    const { tracker, time, beat, events, updates } = setup();
    tracker.setEndpoints([a, b]);
    tracker.setHeartbeats([beat('proxy-a', { ttl: 3_000 }), beat('proxy-b', { ttl: 3_000 })]);
    time.advance(10_000);
    expect(events()).toEqual([]);
    expect(updates.at(-1)?.view.members.every((m) => m.up)).toBe(true);
  });

  it('marks a member DOWN when the store reports its heartbeat stale', () => {
    const { tracker, time, beat, events } = setup();
    tracker.setEndpoints([a, b]);
    tracker.setHeartbeats([beat('proxy-a'), beat('proxy-b')]);
    time.advance(3_000);
    tracker.setHeartbeats([beat('proxy-a'), beat('proxy-b', { alive: false })]);
    time.advance(1_000);
    expect(events()).toEqual(['DOWN proxy-b']);
  });

  it('heals a missed watch event at the next reconcile, diffing against what was published', () => {
    const { tracker, time, beat, events } = setup();
    tracker.setEndpoints([a, b, c]);
    tracker.setHeartbeats([beat('proxy-a'), beat('proxy-b'), beat('proxy-c')]);
    // The watch lost the removal of proxy-c; a relist brings the truth.
    tracker.reconcile({ endpoints: [a, b] });
    time.advance(1_000);
    expect(events()).toEqual(['REMOVED_NODE proxy-c']);
    tracker.reconcile();
    time.advance(2_000);
    expect(events()).toEqual(['REMOVED_NODE proxy-c']); // nothing new: no duplicates
  });

  it('re-publishes a view change that carries no event (ZDM tokens move on a join)', () => {
    const { tracker, updates, time, beat } = setup();
    tracker.setEndpoints([a, b]);
    tracker.setHeartbeats([beat('proxy-a'), beat('proxy-b'), beat('proxy-c')]);
    tracker.setEndpoints([a, b, { ...c, ready: false }]); // joins the ring, not yet peers
    time.advance(1_000);
    expect(updates).toHaveLength(2);
    expect(updates[1]?.events).toEqual([]);
    expect(updates[1]?.view.members.map((m) => m.id)).toEqual(['proxy-a', 'proxy-b', 'proxy-c']);
  });

  it('does not republish for heartbeats that only refresh lastSeen', () => {
    const { tracker, updates, time, beat } = setup();
    tracker.setEndpoints([a, b]);
    tracker.setHeartbeats([beat('proxy-a'), beat('proxy-b')]);
    time.advance(2_000);
    tracker.setHeartbeats([beat('proxy-a'), beat('proxy-b')]);
    time.advance(2_000);
    expect(updates).toHaveLength(1);
  });

  it('stops every timer on close', () => {
    const { tracker, time, beat, updates } = setup();
    tracker.setEndpoints([a, b]);
    tracker.setHeartbeats([beat('proxy-a'), beat('proxy-b')]);
    tracker.setEndpoints([a, { ...b, ready: false }]);
    expect(time.pending).toBeGreaterThan(0);
    tracker.close();
    expect(time.pending).toBe(0);
    time.advance(60_000);
    tracker.setEndpoints([a]);
    expect(updates).toHaveLength(1);
  });

  it('works on the real timers without keeping the process alive', () => {
    const updates: MembershipUpdate[] = [];
    const tracker = new MembershipTracker({
      self: { id: 'proxy-a', nativePort: 9042 },
      membership: options,
      onUpdate: (u) => updates.push(u),
    });
    tracker.setEndpoints([a, b]);
    tracker.setHeartbeats([heartbeat('proxy-a', { lastSeen: Date.now() }), heartbeat('proxy-b', { lastSeen: Date.now() })]);
    expect(updates).toHaveLength(1);
    tracker.close();
  });
});
