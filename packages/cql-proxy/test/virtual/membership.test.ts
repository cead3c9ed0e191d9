import { describe, expect, it } from '@jest/globals';
import { deriveMembership, type MembershipInput } from '../../src/virtual/membership.js';
import { hostIdFor } from '../../src/virtual/host-id.js';
import { advanceView } from '../../src/virtual/view.js';
import { endpoint, heartbeat, options } from './fixtures.js';

const three = [endpoint('proxy-b', '10.0.0.2'), endpoint('proxy-a', '10.0.0.1'), endpoint('proxy-c', '10.0.0.3')];
const beats = [heartbeat('proxy-c'), heartbeat('proxy-a'), heartbeat('proxy-b')];
const input = (selfId: string, extra: Partial<MembershipInput> = {}): MembershipInput => ({
  self: { id: selfId, nativePort: 9042 },
  endpoints: three,
  heartbeats: beats,
  ...extra,
});

describe('the ordered member list', () => {
  it('is sorted by instance id, whatever the input order', () => {
    const m = deriveMembership(input('proxy-b'), options);
    expect(m.members.map((x) => x.id)).toEqual(['proxy-a', 'proxy-b', 'proxy-c']);
  });

  it('is identical on every instance, from differently ordered inputs (ids, tokens, host ids)', () => {
    const strip = (i: MembershipInput) => deriveMembership(i, options).members.map(({ self: _self, ...rest }) => rest);
    const onA = strip(input('proxy-a'));
    const onC = strip(input('proxy-c', { endpoints: [...three].reverse(), heartbeats: [...beats].reverse() }));
    expect(onC).toEqual(onA);
    const zdm = { ...options, tokens: { mode: 'zdm' as const } };
    expect(deriveMembership(input('proxy-c', { endpoints: [...three].reverse() }), zdm).members.map((m) => m.tokens)).toEqual(
      deriveMembership(input('proxy-a'), zdm).members.map((m) => m.tokens),
    );
  });

  it('never puts self last: self sits where its id sorts', () => {
    expect(deriveMembership(input('proxy-a'), options).members.map((m) => m.self)).toEqual([true, false, false]);
  });

  it('compares ids by code unit, not by locale, and falls back to address:port for an empty id', () => {
    const m = deriveMembership(
      input('Z', { endpoints: [endpoint('a', '10.0.0.1'), endpoint('Z', '10.0.0.2'), endpoint('', '10.0.0.9', { port: 9043 })] }),
      { ...options, requireHeartbeat: false },
    );
    expect(m.members.map((x) => x.id)).toEqual(['10.0.0.9:9043', 'Z', 'a']);
  });

  it('gives each member its host id and tokens', () => {
    const m = deriveMembership(input('proxy-a'), options);
    expect(m.members[1]?.hostId).toBe(hostIdFor('prod', 'proxy-b'));
    expect(m.members[1]?.tokens).toHaveLength(8);
  });

  it('keeps the others’ tokens when a member joins (stable mode)', () => {
    const before = deriveMembership(input('proxy-a', { endpoints: three.filter((e) => e.id !== 'proxy-b') }), options);
    const after = deriveMembership(input('proxy-a'), options);
    const tokensOf = (m: typeof after, id: string) => m.members.find((x) => x.id === id)?.tokens;
    expect(tokensOf(after, 'proxy-a')).toEqual(tokensOf(before, 'proxy-a'));
    expect(tokensOf(after, 'proxy-c')).toEqual(tokensOf(before, 'proxy-c'));
  });
});

describe('up and down', () => {
  it('is up when Discovery says ready and the heartbeat is alive', () => {
    const m = deriveMembership(input('proxy-a'), options);
    expect(m.members.every((x) => x.up && x.ready && x.alive)).toBe(true);
  });

  it('is DOWN on a stale heartbeat even while Discovery lists it', () => {
    const m = deriveMembership(
      input('proxy-a', { heartbeats: [heartbeat('proxy-a'), heartbeat('proxy-b', { alive: false }), heartbeat('proxy-c')] }),
      options,
    );
    expect(m.members.find((x) => x.id === 'proxy-b')).toMatchObject({ ready: true, alive: false, up: false });
  });

  it('is DOWN when Discovery says not ready or terminating', () => {
    const endpoints = [
      endpoint('proxy-a', '10.0.0.1'),
      endpoint('proxy-b', '10.0.0.2', { ready: false }),
      endpoint('proxy-c', '10.0.0.3', { terminating: true }),
    ];
    const m = deriveMembership(input('proxy-a', { endpoints }), options);
    expect(m.members.map((x) => x.up)).toEqual([true, false, false]);
  });

  it('counts an endpoint with no heartbeat as DOWN (not yet beaten, or its record expired with its session)', () => {
    const m = deriveMembership(input('proxy-a', { heartbeats: [heartbeat('proxy-a')] }), options);
    expect(m.members.map((x) => [x.id, x.alive])).toEqual([
      ['proxy-a', true],
      ['proxy-b', false],
      ['proxy-c', false],
    ]);
    const noStore = deriveMembership(input('proxy-a', { heartbeats: [] }), { ...options, requireHeartbeat: false });
    expect(noStore.members.every((x) => x.up)).toBe(true);
  });

  it('ignores heartbeats of instances Discovery does not list', () => {
    const m = deriveMembership(input('proxy-a', { heartbeats: [...beats, heartbeat('proxy-z')] }), options);
    expect(m.members.map((x) => x.id)).not.toContain('proxy-z');
  });
});

describe('self', () => {
  it('is a member before Discovery lists it, at its advertised address', () => {
    const m = deriveMembership(
      { self: { id: 'proxy-d', address: '10.0.0.4', nativePort: 9142 }, endpoints: three, heartbeats: beats },
      options,
    );
    expect(m.members.find((x) => x.self)).toMatchObject({
      id: 'proxy-d',
      address: '10.0.0.4',
      nativePort: 9142,
      up: true,
      advertisable: true,
    });
  });

  it('takes its address from Discovery when none is configured, and is unadvertisable with neither', () => {
    expect(deriveMembership(input('proxy-b'), options).members[1]).toMatchObject({ address: '10.0.0.2', self: true });
    const alone = deriveMembership({ self: { id: 'x', nativePort: 9042 }, endpoints: [], heartbeats: [] }, options);
    expect(alone.members[0]).toMatchObject({ advertisable: false, up: true });
  });

  it('shows not ready while draining', () => {
    const m = deriveMembership(input('proxy-a', { self: { id: 'proxy-a', nativePort: 9042, ready: false } }), options);
    expect(m.members[0]?.up).toBe(false);
  });
});

describe('placement and payload', () => {
  it('defaults data_center to the backend DC and rack to rack1; hints and overrides win in that order', () => {
    const endpoints = [
      endpoint('proxy-a', '10.0.0.1'),
      endpoint('proxy-b', '10.0.0.2', { dc: 'hint', rack: 'r9' }),
      endpoint('proxy-c', '10.0.0.3', { dc: 'hint' }),
    ];
    const m = deriveMembership(input('proxy-a', { endpoints }), { ...options, placement: { 'proxy-c': { dc: 'east' } } });
    expect(m.members.map((x) => [x.dc, x.rack])).toEqual([
      ['dc1', 'rack1'],
      ['hint', 'r9'],
      ['east', 'rack1'],
    ]);
  });

  it('reads releaseVersion from the heartbeat payload', () => {
    const m = deriveMembership(
      input('proxy-a', {
        heartbeats: [heartbeat('proxy-a', { payload: { releaseVersion: '5.0.2' } }), heartbeat('proxy-b', { payload: [1] })],
      }),
      options,
    );
    expect(m.members[0]?.releaseVersion).toBe('5.0.2');
    expect(m.members[1]?.releaseVersion).toBeUndefined();
  });
});

describe('conflicts', () => {
  it('keeps one entry per id (the ready one) and one member per address:port', () => {
    const endpoints = [
      endpoint('proxy-b', '10.0.0.2', { ready: false }),
      endpoint('proxy-b', '10.0.0.5'),
      endpoint('proxy-a', '10.0.0.1'),
      endpoint('proxy-c', '10.0.0.1'),
      endpoint('proxy-d', '10.0.0.1', { port: 9043 }),
    ];
    const m = deriveMembership(input('proxy-a', { endpoints, heartbeats: [] }), { ...options, requireHeartbeat: false });
    expect(m.members.map((x) => `${x.id}@${x.address}:${x.nativePort}`)).toEqual([
      'proxy-a@10.0.0.1:9042',
      'proxy-b@10.0.0.5:9042',
      'proxy-d@10.0.0.1:9043',
    ]);
    expect(m.excluded.map((x) => x.reason)).toEqual(['duplicate of member proxy-b', "10.0.0.1:9042 is already member proxy-a's address"]);
  });
});

describe('the published view', () => {
  it('lists in system.peers every other up member with a dialable address', () => {
    const endpoints = [...three, endpoint('proxy-d', '0.0.0.0'), endpoint('proxy-e', 'proxy-e.svc')];
    const v = advanceView(
      undefined,
      deriveMembership(input('proxy-b', { endpoints, heartbeats: [] }), { ...options, requireHeartbeat: false }),
    );
    expect(v.self.id).toBe('proxy-b');
    expect(v.peers.map((p) => p.id)).toEqual(['proxy-a', 'proxy-c']);
  });

  it('admits a member once it is up, then keeps it while it is DOWN', () => {
    const notYet = deriveMembership(input('proxy-a', { heartbeats: [heartbeat('proxy-a'), heartbeat('proxy-c')] }), options);
    const v1 = advanceView(undefined, notYet);
    expect(v1.peers.map((p) => p.id)).toEqual(['proxy-c']);
    const v2 = advanceView(v1, deriveMembership(input('proxy-a'), options));
    expect(v2.peers.map((p) => p.id)).toEqual(['proxy-b', 'proxy-c']);
    const v3 = advanceView(v2, notYet);
    expect(v3.peers.map((p) => [p.id, p.up])).toEqual([
      ['proxy-b', false],
      ['proxy-c', true],
    ]);
  });

  it('treats a member at a new address as new: it must be up to be listed there', () => {
    const v1 = advanceView(undefined, deriveMembership(input('proxy-a'), options));
    const moved = [endpoint('proxy-a', '10.0.0.1'), endpoint('proxy-b', '10.0.0.9', { ready: false }), endpoint('proxy-c', '10.0.0.3')];
    const v2 = advanceView(v1, deriveMembership(input('proxy-a', { endpoints: moved }), options));
    expect(v2.peers.map((p) => p.id)).toEqual(['proxy-c']);
  });
});
