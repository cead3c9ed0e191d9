/**
 * The fencing token of a Lease lock: a counter in the Lease's `muster.io/fencing-token`
 * annotation, advanced by the same optimistic write (resourceVersion) that takes the Lease, and
 * never below the acquirer's wall clock in µs.
 *
 * Why not leaseTransitions (the token before): it lives in the object, so a Lease deleted and
 * created again starts over at 0, and every later holder carries a token below the old ones. The
 * annotation has the same weakness; the clock floor is what orders the first token on a new
 * object above the tokens of the old one.
 *
 * The floor's condition: the first token on a recreated Lease exceeds every token of the deleted
 * one when every acquirer's wall clock was within ε of true time and that acquisition came more
 * than 2ε after the last acquisition of the deleted Lease. (Each token T issued at true time t
 * satisfies t − ε ≤ T ≤ t + ε in µs: T is the clock reading or previous + 1, and acquisitions are
 * more than 1 µs apart.) client-go electors holding the Lease in between keep the annotation (they
 * update the object they read), so Muster's tokens count on across them.
 */

export const fencingTokenAnnotation = 'muster.io/fencing-token';

const tokenPattern = /^\d{1,30}$/;

/** The token stored in an annotation, or undefined if there is none. */
export function storedToken(annotation: string | null | undefined): bigint | undefined {
  // An operator's stray edit is not a token: the clock floor takes over, as after a deletion.
  return annotation && tokenPattern.test(annotation) ? BigInt(annotation) : undefined;
}

/** Milliseconds since the Unix epoch as a token floor in µs. */
export function clockFloor(epochMs: number): bigint {
  return BigInt(Math.floor(epochMs)) * 1000n;
}

/** The token of a new acquisition: above the stored one, above any this process saw, at least the floor. */
export function nextFencingToken(stored: bigint | undefined, seen: bigint | undefined, floor: bigint): bigint {
  let next = floor;
  if (stored !== undefined && stored + 1n > next) next = stored + 1n;
  if (seen !== undefined && seen + 1n > next) next = seen + 1n;
  return next;
}
