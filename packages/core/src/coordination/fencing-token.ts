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

/** The token of a new acquisition: above the stored one, above any this process saw, at least the floor. */
export function nextFencingToken(stored: bigint | undefined, seen: bigint | undefined, floor: bigint): bigint {
  let next = floor;
  if (stored !== undefined && stored + 1n > next) next = stored + 1n;
  if (seen !== undefined && seen + 1n > next) next = seen + 1n;
  return next;
}
