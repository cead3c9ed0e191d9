/**
 * The fencing token of a Consul lock: a counter kept in KV beside the lock key, advanced by the
 * same transaction that takes the lock, and never below the acquirer's wall clock in µs.
 *
 * Why not the lock key's ModifyIndex (the token before): it is a Raft index, so it starts again near
 * 1 whenever the servers lose their state (a `-dev` agent restarting, a cluster rebuilt without a
 * snapshot), and every later holder then carries a token below the old ones. A stored counter
 * survives an ordinary restart; the clock floor orders the tokens after a loss of the counter.
 *
 * The floor's condition: the first token after a loss exceeds every earlier one when every
 * acquirer's wall clock was within ε of true time and that acquisition came more than 2ε after the
 * last one before the loss. (Each token T issued at true time t satisfies t − ε ≤ T ≤ t + ε in µs:
 * T is the clock reading or previous + 1, and acquisitions are more than 1 µs apart.)
 */

/** The decimal string a token is stored as; anything else is not a token. */
const tokenPattern = /^\d{1,30}$/;

/** The token stored in a KV value (base64, as Consul returns it), or undefined if there is none. */
export function storedToken(base64Value: string | null | undefined): bigint | undefined {
  if (!base64Value) return undefined;
  const text = Buffer.from(base64Value, 'base64').toString('utf8').trim();
  // An operator's stray write is not a token: the clock floor takes over, as after a loss.
  return tokenPattern.test(text) ? BigInt(text) : undefined;
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
