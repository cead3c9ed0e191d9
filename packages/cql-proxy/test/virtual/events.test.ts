import { describe, expect, it } from '@jest/globals';
import type { Endpoint, MemberHeartbeat } from '@muster/core';
import { diffViews } from '../../src/virtual/events.js';
import { deriveMembership } from '../../src/virtual/membership.js';
import { advanceView, type VirtualView } from '../../src/virtual/view.js';
import { endpoint, heartbeat, options } from './fixtures.js';

const SELF = 'proxy-a';
const step = (previous: VirtualView | undefined, endpoints: Endpoint[], heartbeats: MemberHeartbeat[], selfReady = true) =>
  advanceView(previous, deriveMembership({ self: { id: SELF, nativePort: 9042, ready: selfReady }, endpoints, heartbeats }, options));
const a = endpoint('proxy-a', '10.0.0.1');
const b = endpoint('proxy-b', '10.0.0.2', { port: 9043 });
const c = endpoint('proxy-c', '10.0.0.3');
const beats = (...ids: string[]) => ids.map((id) => heartbeat(id));
const brief = (events: ReturnType<typeof diffViews>) => events.map((e) => `${e.change} ${e.address.address}:${e.address.port}`);

describe('client events from membership', () => {
  const base = step(undefined, [a, c], beats('proxy-a', 'proxy-c'));

  it('sends nothing for the first view', () => {
    expect(diffViews(undefined, base)).toEqual([]);
  });

  it('announces a member that appears up with NEW_NODE, once the view lists it', () => {
    const next = step(base, [a, b, c], beats('proxy-a', 'proxy-b', 'proxy-c'));
    expect(next.peers.map((p) => p.id)).toContain('proxy-b');
    expect(diffViews(base, next)).toEqual([
      { type: 'TOPOLOGY_CHANGE', change: 'NEW_NODE', address: { address: '10.0.0.2', port: 9043 }, memberId: 'proxy-b' },
    ]);
  });

  it('holds back a member that appears not up, and announces it with NEW_NODE (not UP) when it comes up', () => {
    const starting = step(base, [a, b, c], beats('proxy-a', 'proxy-c'));
    expect(diffViews(base, starting)).toEqual([]);
    expect(starting.peers.map((p) => p.id)).not.toContain('proxy-b');
    const up = step(starting, [a, b, c], beats('proxy-a', 'proxy-b', 'proxy-c'));
    expect(brief(diffViews(starting, up))).toEqual(['NEW_NODE 10.0.0.2:9043']);
  });

  it('sends DOWN for a stale heartbeat, keeps the member in peers, then UP when it is back', () => {
    const all = step(base, [a, b, c], beats('proxy-a', 'proxy-b', 'proxy-c'));
    const stale = step(all, [a, b, c], [...beats('proxy-a', 'proxy-c'), heartbeat('proxy-b', { alive: false })]);
    expect(brief(diffViews(all, stale))).toEqual(['DOWN 10.0.0.2:9043']);
    expect(stale.peers.find((p) => p.id === 'proxy-b')?.up).toBe(false);
    const back = step(stale, [a, b, c], beats('proxy-a', 'proxy-b', 'proxy-c'));
    expect(brief(diffViews(stale, back))).toEqual(['UP 10.0.0.2:9043']);
    // No duplicates: the same state again says nothing.
    expect(diffViews(back, step(back, [a, b, c], beats('proxy-a', 'proxy-b', 'proxy-c')))).toEqual([]);
  });

  it('sends DOWN when Discovery marks a member not ready', () => {
    const notReady = step(base, [a, { ...c, ready: false }], beats('proxy-a', 'proxy-c'));
    expect(brief(diffViews(base, notReady))).toEqual(['DOWN 10.0.0.3:9042']);
  });

  it('removes a member that is gone from peers, then sends REMOVED_NODE, whether it was up or down', () => {
    const gone = step(base, [a], beats('proxy-a', 'proxy-c'));
    expect(gone.peers).toEqual([]);
    expect(brief(diffViews(base, gone))).toEqual(['REMOVED_NODE 10.0.0.3:9042']);
    const down = step(base, [a, c], beats('proxy-a'));
    expect(brief(diffViews(down, step(down, [a], beats('proxy-a'))))).toEqual(['REMOVED_NODE 10.0.0.3:9042']);
  });

  it('never sends NEW_NODE for a node absent from peers, nor REMOVED_NODE for one never listed', () => {
    const starting = step(base, [a, b, c], beats('proxy-a', 'proxy-c'));
    expect(diffViews(starting, step(starting, [a, c], beats('proxy-a', 'proxy-c')))).toEqual([]);
    const unreachable = step(base, [a, c, endpoint('proxy-d', '0.0.0.0')], beats('proxy-a', 'proxy-c', 'proxy-d'));
    expect(diffViews(base, unreachable)).toEqual([]);
  });

  it('never sends an event about self', () => {
    const draining = step(base, [a, c], beats('proxy-a', 'proxy-c'), false);
    expect(diffViews(base, draining)).toEqual([]);
    const selfStale = step(base, [a, c], [heartbeat('proxy-a', { alive: false }), heartbeat('proxy-c')]);
    expect(diffViews(base, selfStale)).toEqual([]);
  });

  it('reads a member at a new address:port as one node removed and another added', () => {
    const moved = step(base, [a, { ...c, address: '10.0.0.33' }], beats('proxy-a', 'proxy-c'));
    expect(brief(diffViews(base, moved))).toEqual(['REMOVED_NODE 10.0.0.3:9042', 'NEW_NODE 10.0.0.33:9042']);
  });

  it('orders removals, then DOWN, then UP, then new nodes', () => {
    const d = endpoint('proxy-d', '10.0.0.4');
    const e = endpoint('proxy-e', '10.0.0.5');
    const before = step(base, [a, b, c, d], [...beats('proxy-a', 'proxy-b', 'proxy-c'), heartbeat('proxy-d')]);
    const mid = step(before, [a, b, c, d], [...beats('proxy-a', 'proxy-b', 'proxy-c'), heartbeat('proxy-d', { alive: false })]);
    const after = step(
      mid,
      [a, c, d, e],
      [heartbeat('proxy-a'), heartbeat('proxy-c', { alive: false }), heartbeat('proxy-d'), heartbeat('proxy-e')],
    );
    expect(brief(diffViews(mid, after))).toEqual([
      'REMOVED_NODE 10.0.0.2:9043',
      'DOWN 10.0.0.3:9042',
      'UP 10.0.0.4:9042',
      'NEW_NODE 10.0.0.5:9042',
    ]);
  });
});
