import type { EffectiveConfig } from './effective-config.js';
import { isProcessLocalHeartbeat, processLocalHeartbeatWarning } from './proxy/peer-probe-setup.js';

/**
 * What --check warns about without refusing the config: today, a HeartbeatStore that lives inside
 * one process beside a member list with peers (the run logs the same warning once it sees them).
 * Static members from a file count as peers: the file is meant to list the other instances.
 */
export function checkWarnings({ checked, proxy }: EffectiveConfig): string[] {
  const heartbeat = checked.ports.find((p) => p.port === 'heartbeat')?.specifier;
  if (!isProcessLocalHeartbeat(heartbeat)) return [];
  const discovery = checked.ports.find((p) => p.port === 'discovery');
  const options = (discovery?.options ?? {}) as { members?: unknown[]; file?: string };
  const peers = discovery?.specifier !== 'static' || options.file !== undefined || (options.members?.length ?? 0) > 1;
  if (!peers) return [];
  return [processLocalHeartbeatWarning(heartbeat!, proxy.peerProbe.mode !== 'off')];
}
