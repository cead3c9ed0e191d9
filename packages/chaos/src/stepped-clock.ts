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

/** How the orchestrator hands its time line to the processes it starts. */
export const TIME_LINE_ENV = 'MUSTER_CHAOS_TIME_LINE';

let origin: number | undefined;

/** The machine's monotonic clock (CLOCK_MONOTONIC on Linux): one clock for every process. */
function monotonicMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

/**
 * The run's real time line, shared by all its processes and never stepped: the machine's monotonic
 * clock plus one offset to the wall clock, taken once by the orchestrator and inherited by every
 * process it starts. `performance.timeOrigin + performance.now()` was not shared: each process ties
 * it to the wall clock when it starts, so a host clock stepped (by NTP) between two starts put
 * the second process's events that far off, and the checks compared them as if they were not.
 */
export function realNow(): number {
  origin ??= Number(process.env[TIME_LINE_ENV]) || Date.now() - monotonicMs();
  return origin + monotonicMs();
}

/** The environment for a process of the run: this one's, with its time line. */
export function timeLineEnv(): NodeJS.ProcessEnv {
  realNow();
  return { ...process.env, [TIME_LINE_ENV]: String(origin) };
}
