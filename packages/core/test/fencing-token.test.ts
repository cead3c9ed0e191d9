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

  test('a token is never issued that the next acquirer could not read back: past the longest a stored token may be, acquisition is refused', () => {
    const longest = parseFencingToken('9'.repeat(30));
    expect(longest).toBeDefined();
    // Before: 10^30 was issued; the next acquirer read its 31 digits as no token, and the order fell back to the wall clock.
    expect(() => nextFencingToken(longest, undefined, fencingTokenFloor(Date.now()))).toThrow(
      expect.objectContaining({ code: 'MUSTER_INVALID_ARGUMENT' }) as unknown as Error,
    );
    expect(() => nextFencingToken(undefined, longest, fencingTokenFloor(Date.now()))).toThrow(/fencing token/);
  });
});
