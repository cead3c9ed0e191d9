import type { Muster } from '@muster/core';
import type { ProxyConfig } from '../config.js';
import type { PeerProbeOptions } from './peer-probe.js';

/** Heartbeat adapters whose store lives in one process: a proxy in another process never sees its beats. */
const PROCESS_LOCAL_HEARTBEATS = new Set(['static']);

export interface PeerProbing {
  /** How to probe peers; undefined when the HeartbeatStore already tells their liveness. */
  readonly probe: Omit<PeerProbeOptions, 'onChange'> | undefined;
  /** The HeartbeatStore cannot see other processes: a peer without a heartbeat is not taken as dead. */
  readonly heartbeatsProcessLocal: boolean;
  /** What to warn about when the member list has peers (they may run in other processes). */
  readonly warning: string | undefined;
}

/**
 * Decides how this instance learns its peers' liveness. With a HeartbeatStore shared across
 * processes (Kubernetes, Consul), heartbeats tell it. With none, or with the in-process static
 * store, peers are probed (`proxy.peerProbe.mode: auto`), and the static store is warned about:
 * alone it would show every proxy in another process as dead, so that drivers see a single host.
 */
export function peerProbeFor(config: ProxyConfig, muster: Muster, tls: PeerProbeOptions['tls']): PeerProbing {
  const adapter = muster.adapters.heartbeat;
  const heartbeatsProcessLocal = isProcessLocalHeartbeat(adapter);
  const { mode, interval, timeout } = config.peerProbe;
  const probing = mode === 'on' || (mode === 'auto' && (adapter === undefined || heartbeatsProcessLocal));
  const warning = heartbeatsProcessLocal ? processLocalHeartbeatWarning(adapter!, probing) : undefined;
  return { probe: probing ? { interval, timeout, ...(tls ? { tls } : {}) } : undefined, heartbeatsProcessLocal, warning };
}

/** Whether heartbeat adapter `adapter` keeps its store inside one process. */
export const isProcessLocalHeartbeat = (adapter: string | undefined) => adapter !== undefined && PROCESS_LOCAL_HEARTBEATS.has(adapter);

/** The warning for a process-local HeartbeatStore with peers, as the run logs it and --check prints it. */
export function processLocalHeartbeatWarning(adapter: string, probing: boolean): string {
  return (
    `heartbeat adapter '${adapter}' keeps heartbeats inside this process: proxies in other processes never see them. ` +
    (probing
      ? 'Peers are probed instead (proxy.peerProbe). '
      : 'proxy.peerProbe is off, so peers in other processes count as alive while Discovery lists them. ') +
    'Remove the heartbeat: section for static members, or choose a shared store (kubernetes, consul).'
  );
}
