import { describe, expect, it } from '@jest/globals';
import { PreparedCache } from '../../src/proxy/prepared-cache.js';

/** The bound the cql-proxy README states. */
const BOUND = 64 * 1024 * 1024;

const id = (n: number) => {
  const b = Buffer.alloc(16);
  b.writeUInt32BE(n);
  return b;
};
/** A statement of about `bytes` characters, distinct per n: what a client may PREPARE, one frame each. */
const statement = (n: number, bytes: number) => ({ query: `SELECT * FROM ks.t WHERE k = ${n} /* ${'x'.repeat(bytes)} */`, keyspace: 'ks' });

describe('the prepared statements cache', () => {
  it('keeps the most recently used statements up to its count', () => {
    const cache = new PreparedCache(3);
    for (let n = 0; n < 5; n++) cache.set(id(n), statement(n, 10));
    cache.get(id(2));
    cache.set(id(5), statement(5, 10));
    expect([0, 1, 2, 3, 4, 5].map((n) => cache.get(id(n)) !== undefined)).toEqual([false, false, true, false, true, true]);
  });

  it('is bounded in bytes: 100 distinct 1 MiB statements (a hostile client can PREPARE them) keep at most 64 MiB', () => {
    const cache = new PreparedCache(10_000);
    for (let n = 0; n < 100; n++) cache.set(id(n), statement(n, 1024 * 1024));
    expect(cache.bytes).toBeLessThanOrEqual(BOUND);
    expect(cache.size).toBeLessThan(64);
    expect(cache.get(id(99))).toBeDefined();
    expect(cache.get(id(0))).toBeUndefined();
  });

  it('re-setting a statement (its partition key learnt) counts its bytes once', () => {
    const cache = new PreparedCache(10, 1000);
    cache.set(id(1), statement(1, 100));
    const before = cache.bytes;
    cache.set(id(1), { ...statement(1, 100), partitionKey: { keyspace: 'ks', indexes: [0] } });
    expect(cache.bytes).toBe(before);
  });

  it('keeps the newest statement even when it alone is over the bound', () => {
    const cache = new PreparedCache(10, 1000);
    cache.set(id(1), statement(1, 10));
    cache.set(id(2), statement(2, 5000));
    expect(cache.size).toBe(1);
    expect(cache.get(id(2))).toBeDefined();
  });
});
