/**
 * What a chaos run records. Times (`at`) are milliseconds on the run's shared real time line
 * (`realNow()`: the machine's monotonic clock read in the process that saw the event first, plus
 * the orchestrator's offset to the wall clock), so events from different processes order correctly
 * even when their messages arrive out of order or the host's wall clock is stepped during the run.
 * A contender's own, possibly stepped, clock appears only as `holderNow`/`expiresAt`.
 *
 * `who` names one contender incarnation: `c<slot>.<generation>`; a replacement after a kill keeps
 * the slot (and the heartbeat member id) and takes the next generation.
 */
export type LockEvent =
  | { readonly kind: 'acquiring'; readonly at: number; readonly who: string }
  | {
      readonly kind: 'acquired';
      readonly at: number;
      readonly who: string;
      readonly token: string;
      /** Milliseconds left before `expiresAt` when acquire() returned, on the holder's clock (≤ 0: returned expired). */
      readonly remainingMs: number;
    }
  | {
      readonly kind: 'write';
      readonly at: number;
      /** Order in which the fenced resource judged the writes (arrival order). */
      readonly seq: number;
      readonly who: string;
      readonly token: string;
      readonly accepted: boolean;
      /** The holder's clock and its lease's expiresAt when it decided to write. */
      readonly holderNow: number;
      readonly expiresAt: number;
    }
  | { readonly kind: 'lost' | 'released'; readonly at: number; readonly who: string; readonly token: string; readonly reason?: string }
  | { readonly kind: 'spawned' | 'exited'; readonly at: number; readonly who: string };

export type FaultKind =
  | 'kill-holder'
  | 'kill-any'
  | 'pause-holder'
  | 'zombie'
  | 'clock-step'
  | 'restart-behind'
  | 'latency'
  | 'drop'
  | 'delete-lock'
  | 'invalidate-holder'
  | 'backend-restart'
  | 'black-hole'
  | 'server-pause'
  | 'server-errors'
  | 'observer-black-hole';

/** A fault and the window during which it was in force (`end` = `at` for instant ones). */
export interface FaultEvent {
  readonly kind: 'fault';
  readonly fault: FaultKind;
  readonly at: number;
  readonly end: number;
  /** The contender it hit, or `observer` (the heartbeat observer); undefined for the backend or every contender. */
  readonly target?: string;
  readonly detail: string;
}

/** One look at the heartbeat observer's view, beside what the orchestrator knows about the member. */
export interface HeartbeatSample {
  readonly kind: 'hb-sample';
  readonly at: number;
  readonly member: string;
  /** Generation of the member's newest live process, and since when it has been running unpaused (undefined: none is). */
  readonly runningGeneration?: number;
  readonly runningSince?: number;
  /** Since when no process of the member has been running unpaused. */
  readonly downSince?: number;
  /** What the observer reports. */
  readonly observedAlive: boolean;
  readonly observedGeneration?: number;
}

export type HistoryEvent = LockEvent | FaultEvent | HeartbeatSample;

/** The parameters the verdict is judged against. */
export interface Bounds {
  readonly ttl: number;
  /** Longest time without a holder, outside backend faults, that is not a violation. */
  readonly livenessBound: number;
  readonly heartbeatTtl: number;
  /** Slack on heartbeat transitions (observation delay of the backend's watch). */
  readonly heartbeatGrace: number;
}
