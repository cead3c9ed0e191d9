import type { MusterConfig } from '@muster/core';
import type { LockEvent } from './history.js';

/** What one contender is told to do. */
export interface ContenderSpec {
  readonly who: string;
  /** Heartbeat member id: the slot, kept by every generation. */
  readonly member: string;
  readonly generation: number;
  readonly config: MusterConfig | string;
  /** Heartbeat group every member of the run beats in (the observer watches it). */
  readonly group: string;
  readonly lockName: string;
  readonly ttl: number;
  readonly heartbeatTtl: number;
  readonly seed: number;
  /** Initial offset of the contender's clock (a host whose clock is behind). */
  readonly clockOffset: number;
}

export interface ObserverSpec {
  readonly config: MusterConfig | string;
  readonly group: string;
}

/** Orchestrator → host process. */
export type HostCommand =
  | { readonly t: 'spawn'; readonly spec: ContenderSpec }
  | { readonly t: 'observe'; readonly spec: ObserverSpec }
  | { readonly t: 'crash'; readonly who: string }
  /** `who` '*' steps every contender of the host. */
  | { readonly t: 'step'; readonly who: string; readonly ms: number }
  | { readonly t: 'ack'; readonly rid: number; readonly accepted: boolean };

/** A member as the observer sees it. */
export interface ObservedMember {
  readonly member: string;
  readonly alive: boolean;
  readonly generation?: number;
}

/** Host process → orchestrator. */
export type HostReport =
  | { readonly t: 'event'; readonly event: Exclude<LockEvent, { kind: 'write' }> }
  | {
      readonly t: 'write';
      readonly rid: number;
      readonly at: number;
      readonly who: string;
      readonly token: string;
      readonly holderNow: number;
      readonly expiresAt: number;
    }
  | { readonly t: 'view'; readonly at: number; readonly members: readonly ObservedMember[] }
  | { readonly t: 'log'; readonly who: string; readonly message: string };

/** Heartbeat payload: lets the observer tell generations apart. */
export interface BeatPayload {
  readonly generation: number;
  readonly pid: number;
  readonly [key: string]: number;
}
