/**
 * The local clock every duration judgement uses (lease expiry, renew deadlines, heartbeat
 * liveness, debounce delays). Expiry is always judged on it, from the moment a change was
 * observed, never by comparing a remote timestamp with local time. Injectable so tests can move
 * time by hand; timers still run on setTimeout, so a test clock must move with them (jest's fake
 * timers move both).
 */
export interface Clock {
  /** Milliseconds on a monotonic local time line. Only differences between two readings mean anything. */
  now(): number;
  /**
   * Wall-clock milliseconds since the Unix epoch, to read the age of a timestamp another process
   * wrote (a heartbeat's renewTime). Optional: a clock without it (a test clock) stands for both.
   */
  wall?(): number;
}

/**
 * Monotonic: `performance.now()` never jumps when NTP or an operator steps the wall clock, so a
 * stepped clock can neither let a contender take a live lease early nor extend a holder's belief.
 * Offset by `performance.timeOrigin` so readings start near `Date.now()` (readable in logs), but
 * they drift away from it by every wall-clock step after the process started.
 */
export const systemClock: Clock = { now: () => performance.timeOrigin + performance.now(), wall: () => Date.now() };
