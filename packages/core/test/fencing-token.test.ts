import { describe, expect, test } from '@jest/globals';
import { fencingTokenFloor, nextFencingToken, parseFencingToken } from '../src/coordination/fencing-token.js';

describe('fencing tokens that outlive the lock object', () => {
  test('the next token is above the stored one and above what this process saw, at least the clock floor', () => {
    const floor = fencingTokenFloor(1_700_000_000_000);
    expect(floor).toBe(1_700_000_000_000_000n);
    expect(nextFencingToken(undefined, undefined, floor)).toBe(floor); // a new or recreated object
    expect(nextFencingToken(floor + 5n, undefined, floor)).toBe(floor + 6n); // a clock behind the stored token
    expect(nextFencingToken(3n, floor + 9n, floor)).toBe(floor + 10n); // the object lost, this process remembers
  });

  test('only a decimal string is a stored token; anything else lets the clock floor decide', () => {
    expect(parseFencingToken(' 42\n')).toBe(42n);
    for (const stray of [undefined, null, '', '-1', '1e9', 'abc', '9'.repeat(31)]) expect(parseFencingToken(stray)).toBeUndefined();
  });
});
