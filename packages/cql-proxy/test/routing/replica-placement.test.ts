import { describe, expect, it } from '@jest/globals';
import { placeReplicas } from '../../src/routing/replica-placement.js';
import { TokenRing, type RingNode } from '../../src/routing/token-ring.js';

const node = (host: string, dataCenter: string, rack: string, ...tokens: number[]): RingNode => ({
  host,
  port: 9042,
  dataCenter,
  rack,
  tokens: tokens.map(BigInt),
});

const hosts = (ring: TokenRing, replicas: number[]) => replicas.map((i) => ring.nodes[i]!.host);

describe('TokenRing', () => {
  const ring = new TokenRing([node('a', 'dc1', 'r1', 0, 30), node('b', 'dc1', 'r1', 10), node('c', 'dc1', 'r1', 20)]);

  it('gives a token to the node of the first token at or after it, wrapping past the last', () => {
    const owner = (token: bigint) => ring.nodes[ring.ownerAt(ring.positionOf(token))]!.host;
    expect(owner(-5n)).toBe('a');
    expect(owner(0n)).toBe('a');
    expect(owner(1n)).toBe('b');
    expect(owner(10n)).toBe('b');
    expect(owner(25n)).toBe('a');
    expect(owner(31n)).toBe('a');
  });
});

describe('placeReplicas', () => {
  it('SimpleStrategy: the next distinct nodes clockwise, racks ignored', () => {
    const ring = new TokenRing([node('a', 'dc1', 'r1', 0, 15), node('b', 'dc1', 'r1', 10), node('c', 'dc1', 'r2', 20)]);
    expect(hosts(ring, placeReplicas(ring, { kind: 'simple', factor: 1 }, ring.positionOf(5n)))).toEqual(['b']);
    // b (10), a (15) — a's second token — then c (20).
    expect(hosts(ring, placeReplicas(ring, { kind: 'simple', factor: 2 }, ring.positionOf(5n)))).toEqual(['b', 'a']);
    expect(hosts(ring, placeReplicas(ring, { kind: 'simple', factor: 5 }, ring.positionOf(21n)))).toEqual(['a', 'b', 'c']);
  });

  it('NetworkTopologyStrategy: per data center, distinct racks first, then the nodes passed over in ring order', () => {
    const ring = new TokenRing([
      node('a', 'dc1', 'r1', 0),
      node('b', 'dc1', 'r1', 10),
      node('c', 'dc1', 'r2', 20),
      node('d', 'dc1', 'r2', 30),
    ]);
    const nts = (factor: number) => ({ kind: 'network' as const, factors: new Map([['dc1', factor]]) });
    // From a: a (r1), b passed over (r1 has one), c (r2).
    expect(hosts(ring, placeReplicas(ring, nts(2), ring.positionOf(0n)))).toEqual(['a', 'c']);
    // Every rack has one once c is in: b, passed over, comes next, before d.
    expect(hosts(ring, placeReplicas(ring, nts(3), ring.positionOf(0n)))).toEqual(['a', 'c', 'b']);
    expect(hosts(ring, placeReplicas(ring, nts(4), ring.positionOf(0n)))).toEqual(['a', 'c', 'b', 'd']);
  });

  it('NetworkTopologyStrategy: each data center gets its own count; one not named gets none', () => {
    const ring = new TokenRing([
      node('a', 'dc1', 'r1', 0),
      node('x', 'dc2', 'r1', 5),
      node('b', 'dc1', 'r1', 10),
      node('y', 'dc2', 'r1', 15),
      node('c', 'dc1', 'r1', 20),
      node('z', 'dc3', 'r1', 25),
    ]);
    const factors = new Map([
      ['dc1', 2],
      ['dc2', 1],
    ]);
    expect(hosts(ring, placeReplicas(ring, { kind: 'network', factors }, ring.positionOf(1n)))).toEqual(['x', 'b', 'c']);
    // More replicas asked for than the DC has nodes: all of them.
    expect(hosts(ring, placeReplicas(ring, { kind: 'network', factors: new Map([['dc2', 5]]) }, 0))).toEqual(['x', 'y']);
  });

  it('an empty ring has no replicas', () => {
    expect(placeReplicas(new TokenRing([]), { kind: 'simple', factor: 3 }, 0)).toEqual([]);
  });
});
