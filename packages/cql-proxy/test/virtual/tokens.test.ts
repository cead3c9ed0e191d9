import { describe, expect, it } from '@jest/globals';
import { InvalidArgumentError } from '@muster/core';
import { assignTokens, hash64, isValidToken, stableTokens, zdmTokens } from '../../src/virtual/tokens.js';

const ids = (n: number) => Array.from({ length: n }, (_, i) => `proxy-${i}`);

describe('stable tokens', () => {
  it('are deterministic and in the Murmur3 range', () => {
    expect(stableTokens('proxy-0')).toEqual(stableTokens('proxy-0'));
    expect(stableTokens('proxy-0')).not.toEqual(stableTokens('proxy-1'));
    for (const t of stableTokens('proxy-0', 256)) expect(isValidToken(t)).toBe(true);
    expect(hash64('proxy-0#0')).toBe(stableTokens('proxy-0')[0]);
  });

  it('default to 8 per member, as distinct decimal strings over the whole ring', () => {
    const ring = assignTokens(ids(20));
    const all = [...ring.values()].flat();
    expect([...ring.values()].every((t) => t.length === 8)).toBe(true);
    expect(new Set(all).size).toBe(160);
    for (const t of all) {
      expect(t).toMatch(/^-?\d+$/);
      expect(isValidToken(BigInt(t))).toBe(true);
    }
  });

  it('are listed in set<varchar> order (string order, as a real server returns them)', () => {
    const tokens = assignTokens(['a']).get('a') ?? [];
    expect(tokens).toEqual([...tokens].sort());
  });

  it('leave the other members untouched when one joins or leaves', () => {
    const before = assignTokens(['proxy-a', 'proxy-c']);
    const after = assignTokens(['proxy-a', 'proxy-b', 'proxy-c']);
    expect(after.get('proxy-a')).toEqual(before.get('proxy-a'));
    expect(after.get('proxy-c')).toEqual(before.get('proxy-c'));
    const left = assignTokens(['proxy-c']);
    expect(left.get('proxy-c')).toEqual(before.get('proxy-c'));
  });

  it('settle a collision for the member that sorts first, and never use the minimum token', () => {
    // A hash where every first attempt collides on 7, and the ring's minimum comes up once.
    const hash = (text: string) =>
      text.split('#').length === 2 ? 7n : text.endsWith('#1') && text.startsWith('b') ? -(2n ** 63n) : BigInt(text.length);
    const ring = assignTokens(['a', 'b'], { perMember: 1 }, hash);
    expect(ring.get('a')).toEqual(['7']);
    expect(ring.get('b')).toEqual([String('b#0#2'.length)]);
  });

  it('use the requested count', () => {
    expect(assignTokens(['a'], { perMember: 1 }).get('a')).toHaveLength(1);
    expect(assignTokens(['a'], { perMember: 256 }).get('a')).toHaveLength(256);
  });
});

describe('ZDM-compatible tokens', () => {
  it('follow floor(2^64/(T*N))*(t*N+i) - 2^63', () => {
    const T = 8n;
    const N = 3n;
    for (let i = 0; i < 3; i++) {
      const expected = Array.from({ length: 8 }, (_, t) => (2n ** 64n / (T * N)) * (BigInt(t) * N + BigInt(i)) - 2n ** 63n);
      expect(zdmTokens(i, 3)).toEqual(expected);
    }
  });

  it('match worked values for one member and for two', () => {
    expect(zdmTokens(0, 1, 2)).toEqual([-(2n ** 63n), 0n]);
    expect(zdmTokens(1, 2, 1)).toEqual([0n]);
    expect(zdmTokens(0, 2, 2)).toEqual([-(2n ** 63n), 0n]);
    expect(zdmTokens(1, 2, 2)).toEqual([-(2n ** 62n), 2n ** 62n]);
  });

  it('interleave members evenly and stay in range and distinct', () => {
    const ring = assignTokens(ids(5), { mode: 'zdm', perMember: 16 });
    const all = [...ring.values()].flat().map(BigInt);
    expect(new Set(all).size).toBe(80);
    for (const t of all) expect(isValidToken(t)).toBe(true);
    const sorted = [...all].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const owner = new Map([...ring].flatMap(([id, ts]) => ts.map((t) => [BigInt(t), id] as const)));
    // Walking the ring visits proxy-0, proxy-1, ..., proxy-4 over and over.
    expect(sorted.slice(0, 10).map((t) => owner.get(t))).toEqual([...ids(5), ...ids(5)]);
  });

  it('depend on the ring position, so a join moves the others (why it is not the default)', () => {
    const before = assignTokens(['a', 'c'], { mode: 'zdm' });
    const after = assignTokens(['a', 'b', 'c'], { mode: 'zdm' });
    expect(after.get('c')).not.toEqual(before.get('c'));
  });
});

describe('token options', () => {
  it('refuse counts outside 1..256 and bad member positions', () => {
    expect(() => assignTokens(['a'], { perMember: 0 })).toThrow(InvalidArgumentError);
    expect(() => assignTokens(['a'], { perMember: 257 })).toThrow(/1 to 256/);
    expect(() => assignTokens(['a'], { perMember: 1.5 })).toThrow(InvalidArgumentError);
    expect(() => zdmTokens(2, 2)).toThrow(/0\.\.1/);
    expect(() => zdmTokens(0, 0)).toThrow(/positive/);
  });
});
