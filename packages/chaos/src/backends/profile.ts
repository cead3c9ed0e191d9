import type { MusterConfig } from '@muster/core';
import type { FaultKind } from '../history.js';

/**
 * How a chaos run reaches one backend: the config each contender and the observer use, the faults
 * this backend can take, and the hooks for the ones that need the server (deletion, restart).
 */
export interface BackendProfile {
  readonly name: string;
  /** Contenders share one host process (the backend lives in-process, as static's does). */
  readonly inProcess: boolean;
  readonly faults: readonly FaultKind[];
  readonly ttl: number;
  /** Longest time without a holder that is not a violation, outside backend-wide faults. */
  readonly livenessBound: number;
  /** How late the observer may see a heartbeat transition beyond its ttl. */
  readonly heartbeatGrace: number;
  /** Where contenders connect; each contender slot gets a loopback TCP proxy in front of it. */
  readonly upstream?: { readonly host: string; readonly port: number };
  /** The config of contender `slot`; `proxyPort` is its proxy when `upstream` is set. */
  contenderConfig(slot: number, proxyPort: number | undefined): MusterConfig | string;
  observerConfig(): MusterConfig | string;
  /** The heartbeat member id of a slot, and the group every member beats in. */
  memberId(slot: number): string;
  readonly group: string;
  readonly lockName: string;
  deleteLock?(): Promise<void>;
  /**
   * Takes the lock from its holder behind the lock client's back, as the backend's own machinery
   * can (Kubernetes: the Lease deleted and created again by a foreign holder; Consul: the holder's
   * session destroyed, as a failing health check invalidates it). Resolves with what it did.
   */
  invalidateHolder?(): Promise<string>;
  restart?(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The faults a backend reached over the network takes: every process fault and clock step, latency
 * and dropped connections through the contenders' proxies, deletion of the lock object, and a
 * restart of the server when the run owns it.
 */
export function networkedFaults(ownsServer: boolean): readonly FaultKind[] {
  const faults: FaultKind[] = [
    'kill-holder',
    'kill-any',
    'pause-holder',
    'zombie',
    'clock-step',
    'restart-behind',
    'latency',
    'drop',
    'delete-lock',
    'invalidate-holder',
  ];
  return ownsServer ? [...faults, 'backend-restart'] : faults;
}
