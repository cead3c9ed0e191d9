import { describe, expect, it } from '@jest/globals';
import { murmur3Token } from '../../src/routing/murmur3.js';
import { ReplicaRouter, type RoutingTopology } from '../../src/routing/replica-router.js';
import type { Replication } from '../../src/routing/replication.js';
import type { RingNode } from '../../src/routing/token-ring.js';

const key = Buffer.from('68656c6c6f20776f726c64', 'hex');
const token = murmur3Token(key); // 5998619086395760910
const node = (host: string, dataCenter: string, t: bigint): RingNode => ({ host, port: 9042, dataCenter, rack: 'r1', tokens: [t] });

/** Clockwise from the key's token: a, then remote, then b, then c. */
const ring = [
  node('a', 'dc1', token + 1n),
  node('remote', 'dc2', token + 2n),
  node('b', 'dc1', token + 3n),
  node('c', 'dc1', token - 100n),
];

const topology = (replication: Record<string, Replication>): RoutingTopology => ({
  ring,
  replication: new Map(Object.entries(replication)),
  localDataCenter: 'dc1',
});

describe('ReplicaRouter', () => {
  const sick = new Set<string>();
  const router = (replication: Record<string, Replication>) =>
    new ReplicaRouter(
      () => topology(replication),
      (n) => !sick.has(n.host),
    );

  it('picks the first replica in ring order', () => {
    sick.clear();
    expect(router({ ks: { kind: 'simple', factor: 3 } }).replicaFor('ks', [key])?.host).toBe('a');
  });

  it('never picks a sick replica: the next healthy one, or none (the ordinary path)', () => {
    sick.clear();
    sick.add('a');
    expect(router({ ks: { kind: 'simple', factor: 3 } }).replicaFor('ks', [key])?.host).toBe('b');
    expect(router({ ks: { kind: 'simple', factor: 1 } }).replicaFor('ks', [key])).toBeUndefined();
  });

  it('never picks a replica in another data center', () => {
    sick.clear();
    sick.add('a');
    // SimpleStrategy 2 from the key: a and remote; a is sick, remote is not local.
    expect(router({ ks: { kind: 'simple', factor: 2 } }).replicaFor('ks', [key])).toBeUndefined();
    expect(router({ ks: { kind: 'network', factors: new Map([['dc2', 1]]) } }).replicaFor('ks', [key])).toBeUndefined();
  });

  it('routes nothing for a keyspace whose replication it does not know', () => {
    sick.clear();
    expect(router({}).replicaFor('ks', [key])).toBeUndefined();
  });

  it('follows a new topology (the backend view is replaced on refresh)', () => {
    sick.clear();
    let current = topology({ ks: { kind: 'simple', factor: 1 } });
    const r = new ReplicaRouter(
      () => current,
      () => true,
    );
    expect(r.replicaFor('ks', [key])?.host).toBe('a');
    current = { ...current, ring: ring.filter((n) => n.host !== 'a' && n.host !== 'remote') };
    expect(r.replicaFor('ks', [key])?.host).toBe('b');
  });

  describe('holdsEveryPartition (routing without hashing the key)', () => {
    const at = (host: string) => ({ host, port: 9042 });

    it('is the one node of a one-node data center, for any keyspace whose strategy is known', () => {
      sick.clear();
      const single = new ReplicaRouter(
        () => ({
          ring: [node('a', 'dc1', 0n)],
          replication: new Map([['ks', { kind: 'simple', factor: 1 } as Replication]]),
          localDataCenter: 'dc1',
        }),
        (n) => !sick.has(n.host),
      );
      expect(single.holdsEveryPartition('ks', at('a'))).toBe(true);
      expect(single.holdsEveryPartition('ks', { host: 'a', port: 9043 })).toBe(false);
      expect(single.holdsEveryPartition('other', at('a'))).toBe(false);
    });

    it('is every local node when the replication factor covers them all, and none when it does not', () => {
      sick.clear();
      const all = router({ ks: { kind: 'network', factors: new Map([['dc1', 3]]) } });
      expect(['a', 'b', 'c', 'remote'].map((h) => all.holdsEveryPartition('ks', at(h)))).toEqual([true, true, true, false]);
      const some = router({ ks: { kind: 'simple', factor: 2 } });
      expect(['a', 'b', 'c'].map((h) => some.holdsEveryPartition('ks', at(h)))).toEqual([false, false, false]);
    });

    it('is never a sick node', () => {
      sick.clear();
      sick.add('b');
      const all = router({ ks: { kind: 'network', factors: new Map([['dc1', 3]]) } });
      expect(['a', 'b', 'c'].map((h) => all.holdsEveryPartition('ks', at(h)))).toEqual([true, false, true]);
      sick.clear();
    });
  });
});
