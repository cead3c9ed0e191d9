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
  /** The server's certificate and key, for a proxy that answers TLS requests with canned errors (server-errors). */
  readonly upstreamTls?: { readonly cert: Buffer; readonly key: Buffer };
  /** The config of contender `slot`; `proxyPort` is its proxy when `upstream` is set. */
  contenderConfig(slot: number, proxyPort: number | undefined): MusterConfig | string;
  /** The observer's config; `proxyPort` is its own proxy when `upstream` is set. */
  observerConfig(proxyPort: number | undefined): MusterConfig | string;
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
  /** The server's processes now (their pids change with a restart), for SIGSTOP (server-pause). */
  serverProcesses?(): readonly ServerProcess[];
  close(): Promise<void>;
}

/** One process of a private server: what it is (`kube-apiserver`, `etcd`, `consul`) and its pid. */
export interface ServerProcess {
  readonly name: string;
  readonly pid: number;
}

/**
 * The faults a backend reached over the network takes: every process fault and clock step, latency
 * dropped connections, black holes and error answers through the contenders' proxies, a black hole
 * in front of the observer, deletion of the lock object, and a restart or SIGSTOP of the server
 * when the run owns it.
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
    'black-hole',
    'server-errors',
    'observer-black-hole',
  ];
  return ownsServer ? [...faults, 'backend-restart', 'server-pause'] : faults;
}
