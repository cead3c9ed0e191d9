// How probe answers and draining heartbeats shape the endpoints the membership tracker sees.
import { describe, expect, it } from '@jest/globals';
import type { Endpoint, MemberHeartbeat } from '@muster/core';
import { PeerLiveness, type PeerEvidence } from '../../src/proxy/peer-liveness.js';

const endpoint = (id: string): Endpoint => ({ id, address: '127.0.0.1', port: 9042, ready: true, metadata: {} });
const listed = [endpoint('a'), endpoint('b'), endpoint('self')];
const heartbeat = (memberId: string, draining: boolean, alive = true): MemberHeartbeat =>
  ({ memberId, payload: { draining }, lastSeen: 0, ttl: 10_000, alive, incarnation: '1' }) as unknown as MemberHeartbeat;

function shape(liveness: PeerLiveness, evidence: Record<string, PeerEvidence>, now: number) {
  const { endpoints, changesAt } = liveness.apply(listed, 'self', (id) => evidence[id] ?? {}, now);
  return { ready: Object.fromEntries(endpoints.map((e) => [e.id, e.ready])), changesAt };
}

describe('PeerLiveness', () => {
  it('a peer the probe cannot reach stays listed, not ready (DOWN); self is never touched', () => {
    const liveness = new PeerLiveness({ removeAfter: 1000 });
    expect(shape(liveness, { a: { probe: 'up' }, b: { probe: 'down' }, self: { probe: 'down' } }, 0)).toEqual({
      ready: { a: true, b: false, self: true },
      changesAt: undefined,
    });
  });

  it('a draining peer is first not ready, then left out at removeAfter, and stays out until it serves again', () => {
    const liveness = new PeerLiveness({ removeAfter: 1000 });
    expect(shape(liveness, { a: { probe: 'draining' }, b: { probe: 'up' } }, 100)).toEqual({
      ready: { a: false, b: true, self: true },
      changesAt: 1100,
    });
    expect(shape(liveness, { a: { probe: 'draining' }, b: { probe: 'up' } }, 1100).ready).toEqual({ b: true, self: true });
    // Stopped after draining: still out (not back as a DOWN node).
    expect(shape(liveness, { a: { probe: 'down' }, b: { probe: 'up' } }, 5000).ready).toEqual({ b: true, self: true });
    // Started again: back, ready (NEW_NODE for drivers).
    expect(shape(liveness, { a: { probe: 'up' }, b: { probe: 'up' } }, 9000).ready).toEqual({ a: true, b: true, self: true });
  });

  it('a heartbeat that says draining makes a peer leave the same way; a fresh one brings it back', () => {
    const liveness = new PeerLiveness({ removeAfter: 500 });
    expect(shape(liveness, { a: { heartbeat: heartbeat('a', true) } }, 0)).toMatchObject({ ready: { a: false }, changesAt: 500 });
    expect(shape(liveness, { a: {} }, 600).ready).toEqual({ b: true, self: true }); // heartbeat removed at the end
    expect(shape(liveness, { a: { heartbeat: heartbeat('a', false) } }, 700).ready).toEqual({ a: true, b: true, self: true });
  });

  it('a peer that leaves the member list is forgotten', () => {
    const liveness = new PeerLiveness({ removeAfter: 500 });
    shape(liveness, { a: { probe: 'draining' } }, 0);
    liveness.apply([endpoint('self')], 'self', () => ({}), 100);
    expect(shape(liveness, { a: { probe: 'up' } }, 200).ready).toEqual({ a: true, b: true, self: true });
  });
});
