// A virtual cluster of in-process proxies for the membership tests: member i listens on its own
// loopback address, 127.0.0.(firstHost + i), as drivers dial every peer at its rpc_address. What
// the membership is (a members file, fixed static members, Kubernetes, Consul) is the test's part.
import type cassandra from 'cassandra-driver';
import { converged, freePort, startProxy, watchedDriver, type CassandraEntry, type RunningProxy } from './harness.js';

/** The loopback address of member `id`: 127.0.0.(firstHost + its index in `ids`). */
export function memberHost(ids: readonly string[], id: string, firstHost = 1): string {
  return `127.0.0.${ids.indexOf(id) + firstHost}`;
}

/** What startProxy takes for one member, less what the cluster decides (id, host, port). */
export type MemberOptions = Omit<NonNullable<Parameters<typeof startProxy>[1]>, 'id' | 'host' | 'port'>;

export interface ProxyCluster {
  readonly ids: readonly string[];
  /** The members running now. */
  readonly proxies: Map<string, RunningProxy>;
  /** The loopback address member `id` listens on. */
  hostOf(id: string): string;
  /** The native port member `id` listens on. */
  port(id: string): number;
  /** `address:port` of member `id`, as a driver dials it. */
  endpoint(id: string): string;
  /** Starts member `id` (again, after stopMember), with the options the cluster was given. */
  start(id: string): Promise<RunningProxy>;
  /** Stops member `id` (it drains) and leaves it out of `proxies` until start(id). */
  stopMember(id: string): Promise<void>;
  /** Stops every member still running (drains each). */
  stop(): Promise<void>;
}

export interface ProxyClusterOptions {
  readonly ids: readonly string[];
  /** The last octet of the first member's address (default 1). */
  readonly firstHost?: number;
  /** The one native port of every member (default: one free on all their addresses), for a test that publishes it first. */
  readonly port?: number;
  /** A port of its own for each member (a driver that dials each peer at its own native_port). */
  readonly portPerMember?: boolean;
  /** The order the members start in (default `ids`): the ring order must not depend on it. */
  readonly order?: readonly string[];
  /** How long the members may take to see each other up (ms; default 30 s). */
  readonly convergence?: number;
  /** Membership, heartbeat scope and proxy section of member `id` (`at` places every member). */
  member(id: string, at: Pick<ProxyCluster, 'hostOf' | 'port'>): MemberOptions;
}

/**
 * Starts `ids` in front of `backend` and resolves once every member sees every member up; a
 * member that fails to start stops the ones already running.
 */
export async function startProxyCluster(backend: CassandraEntry, options: ProxyClusterOptions): Promise<ProxyCluster> {
  const { ids } = options;
  const hostOf = (id: string) => memberHost(ids, id, options.firstHost);
  const shared = options.port ?? (await freePort(...ids.map(hostOf)));
  const ports = new Map<string, number>();
  for (const id of ids) ports.set(id, options.portPerMember ? await freePort(hostOf(id)) : shared);
  const port = (id: string) => ports.get(id)!;
  const proxies = new Map<string, RunningProxy>();
  const start = async (id: string) => {
    const running = await startProxy(backend, { ...options.member(id, { hostOf, port }), id, host: hostOf(id), port: port(id) });
    proxies.set(id, running);
    return running;
  };
  const stop = async () => {
    for (const p of proxies.values()) await p.stop().catch(() => undefined);
  };
  try {
    for (const id of options.order ?? ids) await start(id);
    await converged(proxies.values(), ids.length, options.convergence);
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    ids,
    proxies,
    hostOf,
    port,
    endpoint: (id) => `${hostOf(id)}:${port(id)}`,
    start,
    stopMember: async (id) => {
      const running = proxies.get(id);
      proxies.delete(id);
      await running?.stop();
    },
    stop,
  };
}

/** A cassandra-driver client of `cluster` (see watchedDriver), given member `via` as its contact point. */
export function clusterDriver(
  cluster: ProxyCluster,
  backend: CassandraEntry,
  via: string,
  policies?: cassandra.ClientOptions['policies'],
): ReturnType<typeof watchedDriver> {
  return watchedDriver(cluster.endpoint(via), {
    localDataCenter: backend.localDataCenter,
    port: cluster.port(via),
    ...(policies ? { policies } : {}),
  });
}
