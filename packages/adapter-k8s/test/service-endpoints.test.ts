import { describe, expect, test } from '@jest/globals';
import type { DiscoveryEvent } from '@muster/core';
import { EndpointSet } from '@muster/core/adapter';
import { endpointsFromSlices, sliceCandidates, type EndpointSliceObject, type SliceEndpoint } from '../src/endpoint-slices.js';
import { ServiceEndpoints } from '../src/service-endpoints.js';

// The changes, and the state after the last of them. (Events of one batch may carry either the
// state after each change or after the whole batch: the port allows both.)
const shape = (events: DiscoveryEvent[]) => [
  ...events.map((e) => `${e.type}${'endpoint' in e ? `:${JSON.stringify(e.endpoint)}` : ''}`),
  (events.at(-1)?.endpoints ?? []).map((x) => JSON.stringify(x)).join(','),
];

/** A small deterministic PRNG, so a failure reproduces. */
function random(seed: number) {
  return () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x80000000;
  };
}

describe('ServiceEndpoints', () => {
  test("matches a full re-merge and core's EndpointSet diff over random slice changes, moves and dual-stack pods", () => {
    for (let seed = 1; seed <= 40; seed++) {
      const rnd = random(seed);
      const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)]!;
      const pods = ['p0', 'p1', 'p2', 'p3', 'p4', 'p5'];
      const addresses = ['10.0.0.1', '10.0.0.2', '10.0.0.3', '10.0.0.4', '10.0.0.5', 'fd00::1', 'fd00::2'];
      const randomSlice = (name: string): EndpointSliceObject => ({
        metadata: { name },
        addressType: 'IPv4',
        ports: rnd() < 0.1 ? [{ name: 'other', port: 1 }] : [{ name: 'cql', port: rnd() < 0.8 ? 9042 : 9043 }],
        endpoints: Array.from({ length: Math.floor(rnd() * 4) }, (): SliceEndpoint => ({
          addresses: rnd() < 0.2 ? [pick(addresses), pick(addresses)] : [pick(addresses)],
          conditions: { ready: rnd() < 0.7, serving: rnd() < 0.8, terminating: rnd() < 0.2 },
          ...(rnd() < 0.8 ? { targetRef: { kind: 'Pod', name: pick(pods) } } : {}),
        })),
      });
      const slices = new Map<string, EndpointSliceObject>();
      const incremental = new ServiceEndpoints();
      const reference = new EndpointSet();
      const selection = { port: 'cql' };
      for (let step = 0; step < 60; step++) {
        const batch: [string, EndpointSliceObject | undefined][] = [];
        for (let k = rnd() < 0.2 ? 3 : 1; k > 0; k--) {
          const name = pick(['s0', 's1', 's2', 's3']);
          batch.push([name, rnd() < 0.25 ? undefined : randomSlice(name)]);
        }
        for (const [name, s] of batch) {
          if (s) slices.set(name, s);
          else slices.delete(name);
        }
        // The same object for an unchanged slice, as the watch loop passes it.
        const changes = new Map(batch.map(([name, s]) => [name, s && sliceCandidates(s, selection)] as const));
        const expected = endpointsFromSlices(slices.values(), selection);
        if (step === 0) {
          incremental.update(changes, { silent: true });
          reference.replace(expected);
        } else {
          expect(shape(incremental.update(changes))).toEqual(shape(reference.replace(expected)));
        }
        expect(incremental.endpoints).toEqual(expected);
      }
    }
  });

  test('a batch that moves an endpoint between slices is one quiet change', () => {
    const se = new ServiceEndpoints();
    const slice = (name: string, ...pods: [string, string][]): EndpointSliceObject => ({
      metadata: { name },
      ports: [{ port: 9042 }],
      endpoints: pods.map(([pod, address]) => ({ addresses: [address], targetRef: { name: pod } })),
    });
    se.update([['a', sliceCandidates(slice('a', ['p1', '10.0.0.1']))]], { silent: true });
    const events = se.update([
      ['a', undefined],
      ['b', sliceCandidates(slice('b', ['p1', '10.0.0.1'], ['p2', '10.0.0.2']))],
    ]);
    expect(events.map((e) => `${e.type}:${'endpoint' in e ? e.endpoint.id : ''}`)).toEqual(['added:p2']);
    expect([...se.sliceNames]).toEqual(['b']);
  });

  test('10 000 endpoints in 100 slices: one slice update is one event with the full snapshot', () => {
    const se = new ServiceEndpoints();
    const slice = (s: number, flip = -1): EndpointSliceObject => ({
      metadata: { name: `s-${s}` },
      ports: [{ name: 'cql', port: 9042 }],
      endpoints: Array.from({ length: 100 }, (_, i) => ({
        addresses: [`10.0.${s}.${i}`],
        conditions: { ready: i !== flip },
        targetRef: { name: `pod-${s}-${i}` },
      })),
    });
    se.update(
      Array.from({ length: 100 }, (_, s) => [`s-${s}`, sliceCandidates(slice(s))] as const),
      { silent: true },
    );
    expect(se.endpoints).toHaveLength(10_000);
    for (let r = 0; r < 20; r++) {
      const events = se.update([[`s-${r}`, sliceCandidates(slice(r, r))]]);
      expect(events.map((e) => e.type)).toEqual(['updated']);
      expect(events[0]!.endpoints).toHaveLength(10_000);
    }
  });
});
