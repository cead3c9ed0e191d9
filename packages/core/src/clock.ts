/**
 * The local clock. Expiry is always judged on it, from the moment a change was observed, never by
 * comparing a remote timestamp with local time. Injectable so tests can move time by hand.
 */
export interface Clock {
  /** Milliseconds on a monotonic-enough local time line (Date.now() by default). */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };
