import { BackendError } from '@muster/core';
import { startPrivateServer, type PrivateServer } from './private-server.js';
import { networkedFaults, type BackendProfile } from './profile.js';

/** The fields of the testenv's `consul` state entry this profile uses. */
export interface ConsulServer {
  readonly address: string;
  readonly url: string;
  readonly pids?: readonly number[];
}

export interface ConsulProfileOptions {
  readonly runId: string;
  readonly ttl?: number;
  /** A running agent (the shared testenv); without it a private agent is started, and restarts become a fault. */
  readonly server?: ConsulServer;
  /**
   * The private agent keeps its data across restarts (the testenv's `consul-persist` server agent):
   * a restart is then the ordinary kind. Without it the agent runs `-dev`, and a restart is also a
   * loss of every key and session.
   */
  readonly persistent?: boolean;
}

/**
 * Contenders, and the observer, reach the agent through their own loopback proxy.
 */
export async function consulProfile(options: ConsulProfileOptions): Promise<BackendProfile> {
  const ttl = options.ttl ?? 3000;
  const own: PrivateServer<ConsulServer> | undefined = options.server
    ? undefined
    : await startPrivateServer<ConsulServer>(options.persistent ? 'consul-persist' : 'consul');
  let server = options.server ?? own!.entry;
  const [host, port] = server.address.split(':') as [string, string];
  const keyPrefix = `chaos-${options.runId}/`;
  const lockName = `chaos-${options.runId}`;
  const config = (via: string) => {
    // lockDelay 0: the default 15 s would dominate every failover figure.
    const opts = { address: via, minSessionTtl: '1s', lockDelay: '0s', keyPrefix };
    return { lock: { adapter: 'consul', options: opts }, heartbeat: { adapter: 'consul', options: opts } };
  };
  const deleteKey = async () => {
    const res = await fetch(`${server.url}/v1/kv/${keyPrefix}locks/${lockName}`, { method: 'DELETE' });
    if (!res.ok) throw new BackendError('consul', `DELETE ${keyPrefix}locks/${lockName}: HTTP ${res.status}`, { status: res.status });
  };
  // As a failing health check would: Consul invalidates the session, which frees the key at once.
  const destroyHolderSession = async (): Promise<string> => {
    const res = await fetch(`${server.url}/v1/kv/${keyPrefix}locks/${lockName}`);
    const entry = res.ok ? ((await res.json()) as { Session?: string }[])[0] : undefined;
    if (!entry?.Session) return `no session held ${keyPrefix}locks/${lockName}`;
    const destroyed = await fetch(`${server.url}/v1/session/destroy/${entry.Session}`, { method: 'PUT' });
    if (!destroyed.ok)
      throw new BackendError('consul', `destroy session ${entry.Session}: HTTP ${destroyed.status}`, { status: destroyed.status });
    return `destroyed the holder's session ${entry.Session}`;
  };
  return {
    name: 'consul',
    inProcess: false,
    faults: networkedFaults(own !== undefined),
    ttl,
    // Consul reaps a dead holder's session up to 2 × its TTL after the last renewal.
    livenessBound: 3 * ttl + 2000,
    heartbeatGrace: 2000,
    upstream: { host, port: Number(port) },
    contenderConfig: (_slot, via) => config(via === undefined ? server.address : `127.0.0.1:${via}`),
    observerConfig: (via) => config(via === undefined ? server.address : `127.0.0.1:${via}`),
    memberId: (slot) => `c${slot}`,
    group: `chaos-${options.runId}`,
    lockName,
    deleteLock: deleteKey,
    invalidateHolder: destroyHolderSession,
    ...(own
      ? {
          restart: async () => void (server = await own.restart()),
          serverProcesses: () => (server.pids ?? []).map((pid) => ({ name: 'consul', pid })),
        }
      : {}),
    close: async () => {
      await fetch(`${server.url}/v1/kv/${keyPrefix}?recurse=true`, { method: 'DELETE' }).catch(() => undefined);
      await own?.close();
    },
  };
}
