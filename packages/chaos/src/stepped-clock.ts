import { systemClock, type Clock } from '@muster/core';

/**
 * The contender's clock, passed to createMuster: the system clock plus an offset the orchestrator
 * steps, as an NTP step would move a host's clock.
 */
export class SteppedClock implements Clock {
  offset: number;

  constructor(offset = 0) {
    this.offset = offset;
  }

  now(): number {
    return systemClock.now() + this.offset;
  }
}

/** The machine's real time line, shared by all processes (never stepped by a chaos run). */
export function realNow(): number {
  return performance.timeOrigin + performance.now();
}
