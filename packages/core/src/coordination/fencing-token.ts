import { InvalidArgumentError } from '../errors.js';

/**
 * Fencing tokens that outlive the lock object, for adapters that store the last issued token beside
 * the lock (a Lease annotation, a KV key) and advance it in the same atomic write that takes the lock.
 *
 * Each acquisition issues max(stored + 1, highest this process has seen + 1, the acquirer's wall clock
 * in µs). On one lock object the tokens strictly increase whatever the clocks do. When the object (or
 * the backend's data) is lost, the clock floor is what orders the next token above the old ones, under
 * a condition the adapters state: every acquirer's wall clock is within ε of true time and the first
 * acquisition after the loss comes more than 2ε after the last one before it. (A token T issued at true
 * time t then satisfies t − ε ≤ T ≤ t + ε in µs: T is a clock reading or previous + 1, and
 * acquisitions are more than 1 µs apart.)
 */

/** The decimal string a token is stored as; anything else is not a token. */
const tokenPattern = /^\d{1,30}$/;
/** The largest token `tokenPattern` reads back. */
const largestToken = 10n ** 30n - 1n;

/**
 * The token in a stored text, or undefined when there is none. An operator's stray edit is not a
 * token: the clock floor takes over, as after a loss.
 */
export function parseFencingToken(text: string | null | undefined): bigint | undefined {
  const trimmed = text?.trim();
  return trimmed && tokenPattern.test(trimmed) ? BigInt(trimmed) : undefined;
}

/** A wall-clock reading (ms since the Unix epoch) as a token floor in µs. */
export function fencingTokenFloor(epochMs: number): bigint {
  return BigInt(Math.floor(epochMs)) * 1000n;
}

/**
 * The token of a new acquisition: above the stored one, above any this process saw, at least the floor.
 * Never one that parseFencingToken would not read back: the next acquirer would take it for a stray
 * edit and fall back to the floor, below it. Only a stored token set by hand near that limit (Muster's
 * own are wall-clock µs, 16 digits) gets there; acquisition is then refused rather than reordered.
 */
export function nextFencingToken(stored: bigint | undefined, seen: bigint | undefined, floor: bigint): bigint {
  let next = floor;
  if (stored !== undefined && stored + 1n > next) next = stored + 1n;
  if (seen !== undefined && seen + 1n > next) next = seen + 1n;
  if (next > largestToken) {
    throw new InvalidArgumentError(
      `the next fencing token would be ${next}, longer than the 30 digits a stored token may have: the stored token was set by hand; ` +
        'set it back to the highest token the protected resources have accepted',
    );
  }
  return next;
}
