import cassandra from 'cassandra-driver';
import { createMuster, type Muster } from '@muster/core';
import pino from 'pino';
import { proxySchema, type ProxyConfig } from '../../src/config.js';
import { CqlProxy } from '../../src/proxy/cql-proxy.js';
import { s, validate } from '@muster/core/adapter';
import { freePortOn } from './loopback.js';
import { startProxyCluster, type ProxyCluster, type ProxyClusterOptions } from './proxy-cluster.js';

export interface CassandraEntry {
  contactPoints: string[];
  localDataCenter: string;
  version: string;
  username?: string;
  password?: string;
}

export interface RunningProxy {
  readonly proxy: CqlProxy;
  readonly muster: Muster;
  readonly address: string;
  stop(): Promise<void>;
}

/** A port free on every one of `hosts` (default 127.0.0.1) at the moment of return. */
export function freePort(...hosts: string[]): Promise<number> {
  const [first = '127.0.0.1', ...others] = hosts;
  return freePortOn([first, ...others]);
}

/** Parses a proxy section the way a config file would be, defaults and all. */
export function proxyConfig(section: Record<string, unknown>, instanceId: string): ProxyConfig {
  const result = validate(s.object({ proxy: proxySchema }), { proxy: section });
  if ('issues' in result) throw new Error(JSON.stringify(result.issues));
  return { ...result.value.proxy, instanceId };
}

/**
 * Starts an in-process proxy on a free port in front of `backend`, with the given membership
 * config for discovery/heartbeat (static by default: a one-member cluster of itself).
 */
export async function startProxy(
  backend: CassandraEntry,
  options: {
    id?: string;
    /** Listen address (default 127.0.0.1); all of 127/8 is loopback on Linux. */
    host?: string;
    port?: number;
    members?: { id: string; address: string; port: number }[];
    /** A members file instead of a fixed list: membership then changes when the file does. */
    membersFile?: string;
    scope?: string;
    /** Discovery and heartbeat sections to use instead of the static ones (a real adapter). */
    ports?: Record<string, unknown>;
    proxy?: Record<string, unknown>;
  } = {},
): Promise<RunningProxy> {
  const id = options.id ?? 'proxy-0';
  const host = options.host ?? '127.0.0.1';
  const port = options.port ?? (await freePort(host));
  const muster = await createMuster(
    options.ports ?? {
      discovery: {
        adapter: 'static',
        options: options.membersFile
          ? { service: 'muster-cql-proxy', file: options.membersFile }
          : { service: 'muster-cql-proxy', members: options.members ?? [{ id, address: host, port }], self: id },
      },
      heartbeat: { adapter: 'static', options: { scope: options.scope ?? `proxy-test-${Math.random()}` } },
    },
  );
  const config = proxyConfig(
    {
      listen: { host, port },
      http: { host: '127.0.0.1', port: 0 },
      backend: {
        contactPoints: backend.contactPoints,
        ...(backend.username ? { username: backend.username, password: backend.password } : {}),
      },
      events: { debounce: '50ms' },
      ...options.proxy,
    },
    id,
  );
  const proxy = new CqlProxy(config, muster, pino({ level: process.env.MUSTER_TEST_LOG ?? 'silent' }));
  await proxy.start();
  return {
    proxy,
    muster,
    address: `${host}:${proxy.port}`,
    stop: async () => {
      await proxy.stop();
      await muster.close();
    },
  };
}

/** Polls `check` (sync or async) until it gives something truthy, or fails naming `what`. */
export async function until<T>(what: string, check: () => T | undefined | false | Promise<T | undefined | false>, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Waits until every proxy shows `count` members up: the cluster has converged. */
export function converged(proxies: Iterable<RunningProxy>, count: number, ms = 30_000): Promise<true> {
  const all = [...proxies];
  return until(
    `every proxy to see ${count} members up`,
    () => all.every((p) => (p.proxy.topology().members as { up: boolean }[]).filter((m) => m.up).length === count),
    ms,
  );
}

/** What a driver reported about the cluster's hosts, with when. */
export interface HostEvent {
  readonly type: 'hostAdd' | 'hostRemove' | 'hostUp' | 'hostDown';
  readonly address: string;
  readonly at: number;
}

/**
 * A connected cassandra-driver client of a virtual cluster whose instances all listen on `port`,
 * recording its host events and its warnings (where it logs a DOWN it does not act on).
 */
export async function watchedDriver(
  contactPoint: string,
  options: { localDataCenter: string; port: number; policies?: cassandra.ClientOptions['policies'] },
): Promise<{ client: cassandra.Client; events: HostEvent[]; warnings: string[] }> {
  const client = new cassandra.Client({
    contactPoints: [contactPoint],
    localDataCenter: options.localDataCenter,
    protocolOptions: { port: options.port },
    ...(options.policies ? { policies: options.policies } : {}),
  });
  const events: HostEvent[] = [];
  const warnings: string[] = [];
  for (const type of ['hostAdd', 'hostRemove', 'hostUp', 'hostDown'] as const) {
    client.on(type, (host: { address: string }) => events.push({ type, address: host.address, at: Date.now() }));
  }
  client.on('log', (level: string, _source: string, message: string) => {
    if (level === 'warning') warnings.push(message);
  });
  await client.connect();
  return { client, events, warnings };
}

/** In-process proxies on static membership with each other, each on its own loopback address. */
export type StaticCluster = ProxyCluster;

/**
 * Starts `ids` as one virtual cluster in front of `backend` (see startProxyCluster; the first
 * member on 127.0.0.2 unless `firstHost` says otherwise) on static membership with each other,
 * beating heartbeats into one shared scope, and resolves once every instance sees every member up.
 */
export function startStaticCluster(
  backend: CassandraEntry,
  options: Omit<ProxyClusterOptions, 'member'> & { name: string; proxy?: Record<string, unknown> },
): Promise<StaticCluster> {
  const { ids } = options;
  const scope = `${options.name}-${process.pid}-${Date.now()}`;
  return startProxyCluster(backend, {
    firstHost: 2,
    ...options,
    member: (id, at) => ({
      members: ids.map((m) => ({ id: m, address: at.hostOf(m), port: at.port(m) })),
      scope,
      proxy: { instanceId: id, heartbeat: { interval: '200ms', ttl: '3s' }, ...options.proxy },
    }),
  });
}
