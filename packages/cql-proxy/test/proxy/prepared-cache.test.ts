// The shared cache of PREPAREs: least recently used out first, ids told apart by every byte,
// looked up in place in an EXECUTE's body.
import { describe, expect, it } from '@jest/globals';
import { PreparedCache } from '../../src/proxy/prepared-cache.js';

const id = (hex: string) => Buffer.from(hex, 'hex');
const statement = (query: string) => ({ query, keyspace: 'ks' });
const queries = (cache: PreparedCache, ids: Buffer[]) => ids.map((i) => cache.get(i)?.query);

describe('PreparedCache', () => {
  it('evicts the least recently used; a lookup makes an entry recent', () => {
    const cache = new PreparedCache(2);
    const [a, b, c] = [id('aa'.repeat(16)), id('bb'.repeat(16)), id('cc'.repeat(16))];
    cache.set(a, statement('a'));
    cache.set(b, statement('b'));
    expect(cache.get(a)?.query).toBe('a'); // b is now the oldest
    cache.set(c, statement('c'));
    expect(cache.size).toBe(2);
    expect(queries(cache, [a, b, c])).toEqual(['a', undefined, 'c']);
  });

  it('replaces the statement of an id set again, without growing', () => {
    const cache = new PreparedCache(4);
    const a = id('01'.repeat(16));
    cache.set(a, statement('old'));
    cache.set(Buffer.from(a), statement('new'));
    expect(cache.size).toBe(1);
    expect(cache.get(a)?.query).toBe('new');
  });

  it('tells apart ids that agree in their first six bytes and length, and evicts any of them alone', () => {
    const cache = new PreparedCache(3);
    const prefix = '0102030405060708';
    const ids = ['aa', 'bb', 'cc', 'dd'].map((tail) => id(prefix + tail.repeat(8)));
    ids.slice(0, 3).forEach((i, n) => cache.set(i, statement(`q${n}`)));
    expect(queries(cache, ids)).toEqual(['q0', 'q1', 'q2', undefined]);
    cache.get(ids[0]!);
    cache.get(ids[2]!); // ids[1], in the middle of the chain, is now the oldest
    cache.set(ids[3]!, statement('q3'));
    expect(queries(cache, ids)).toEqual(['q0', undefined, 'q2', 'q3']);
    // A prefix of a known id, or the id with one more byte, is another id.
    expect(cache.get(ids[0]!.subarray(0, 15))).toBeUndefined();
    expect(cache.get(Buffer.concat([ids[0]!, id('00')]))).toBeUndefined();
  });

  it('finds an id in place, inside a larger buffer, and handles ids shorter than six bytes', () => {
    const cache = new PreparedCache(8);
    const long = id('f0e1d2c3b4a5968778695a4b3c2d1e0f');
    const short = id('0a0b');
    cache.set(long, statement('long'));
    cache.set(short, statement('short'));
    const body = Buffer.concat([id('0010'), long, id('000a')]);
    expect(cache.find(body, 2, 18)?.query).toBe('long');
    expect(cache.find(body, 2, 17)).toBeUndefined();
    expect(cache.get(id('0a0b'))?.query).toBe('short');
    expect(cache.get(id('0a0b00'))).toBeUndefined();
    expect(cache.get(id('000a0b'))).toBeUndefined();
  });

  it('keeps at most its capacity over many distinct ids', () => {
    const cache = new PreparedCache(50);
    for (let n = 0; n < 1_000; n++) cache.set(Buffer.from(n.toString(16).padStart(32, '0'), 'hex'), statement(`q${n}`));
    expect(cache.size).toBe(50);
    expect(cache.get(Buffer.from((999).toString(16).padStart(32, '0'), 'hex'))?.query).toBe('q999');
    expect(cache.get(Buffer.from((949).toString(16).padStart(32, '0'), 'hex'))).toBeUndefined();
  });
});

/** The bound the cql-proxy README states. */
const BOUND = 64 * 1024 * 1024;

const numberedId = (n: number) => {
  const b = Buffer.alloc(16);
  b.writeUInt32BE(n);
  return b;
};
/** A statement of about `bytes` characters, distinct per n: what a client may PREPARE, one frame each. */
const sizedStatement = (n: number, bytes: number) => ({
  query: `SELECT * FROM ks.t WHERE k = ${n} /* ${'x'.repeat(bytes)} */`,
  keyspace: 'ks',
});

describe('PreparedCache bounds', () => {
  it('keeps the most recently used statements up to its count', () => {
    const cache = new PreparedCache(3);
    for (let n = 0; n < 5; n++) cache.set(numberedId(n), sizedStatement(n, 10));
    cache.get(numberedId(2));
    cache.set(numberedId(5), sizedStatement(5, 10));
    expect([0, 1, 2, 3, 4, 5].map((n) => cache.get(numberedId(n)) !== undefined)).toEqual([false, false, true, false, true, true]);
  });

  it('is bounded in bytes: 100 distinct 1 MiB statements (a hostile client can PREPARE them) keep at most 64 MiB', () => {
    const cache = new PreparedCache(10_000);
    for (let n = 0; n < 100; n++) cache.set(numberedId(n), sizedStatement(n, 1024 * 1024));
    expect(cache.bytes).toBeLessThanOrEqual(BOUND);
    expect(cache.size).toBeLessThan(64);
    expect(cache.get(numberedId(99))).toBeDefined();
    expect(cache.get(numberedId(0))).toBeUndefined();
  });

  it('re-setting a statement (its partition key learnt) counts its bytes once', () => {
    const cache = new PreparedCache(10, 1000);
    cache.set(numberedId(1), sizedStatement(1, 100));
    const before = cache.bytes;
    cache.set(numberedId(1), { ...sizedStatement(1, 100), partitionKey: { keyspace: 'ks', indexes: [0] } });
    expect(cache.bytes).toBe(before);
  });

  it('keeps the newest statement even when it alone is over the bound', () => {
    const cache = new PreparedCache(10, 1000);
    cache.set(numberedId(1), sizedStatement(1, 10));
    cache.set(numberedId(2), sizedStatement(2, 5000));
    expect(cache.size).toBe(1);
    expect(cache.get(numberedId(2))).toBeDefined();
  });
});
