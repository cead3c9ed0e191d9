import { describe, expect, it } from '@jest/globals';
import { murmur3Token } from '../../src/routing/murmur3.js';

/**
 * Tokens Cassandra 5.0.8 itself gave these blob keys (`SELECT k, token(k)` on the testenv node):
 * every tail length class, tail bytes at and above 0x80 (the sign-extension quirk), whole blocks.
 */
const CASSANDRA: readonly [string, bigint][] = [
  ['61', -8839064797231613815n],
  ['0102030405060708', -7140443302367346724n],
  ['616263', -5434086359492102041n],
  ['80', -5284281814142962636n],
  ['010203040506070809', -4639342860609086066n],
  ['ff', -4442228696663692417n],
  ['7f80ff01', 1118575278885486092n],
  ['fedcba9876543210fedcba9876543210fe80', 3657751720907365713n],
  ['000102030405060708090a0b0c0d0e0f', 4920504430128807728n],
  ['00', 5048724184180415669n],
  ['68656c6c6f20776f726c64', 5998619086395760910n],
  ['000102030405060708090a0b0c0d0e0f10', 6662781046685680142n],
  ['ffffffffffffffffff', 8434364767658694854n],
];

describe('murmur3Token', () => {
  it.each(CASSANDRA)('0x%s hashes to the token Cassandra gives it', (key, token) => {
    expect(murmur3Token(Buffer.from(key, 'hex'))).toBe(token);
  });

  it('reads a key that is a view into a larger buffer at its own offset', () => {
    const backing = Buffer.from('ffff' + '68656c6c6f20776f726c64' + 'ffff', 'hex');
    expect(murmur3Token(backing.subarray(2, backing.length - 2))).toBe(5998619086395760910n);
  });
});
