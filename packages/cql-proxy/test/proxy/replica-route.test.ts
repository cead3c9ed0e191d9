// Where a client's prepared EXECUTE goes, and how muster_proxy_routed_executes_total counts it.
import { describe, expect, it } from '@jest/globals';
import { ProxyMetrics } from '../../src/http/metrics.js';
import { Opcode } from '../../src/protocol/frame.js';
import { encodeExecute } from '../../src/protocol/requests.js';
import type { BackendAddress, BackendConnection } from '../../src/proxy/backend-connection.js';
import { ReplicaConnections } from '../../src/proxy/replica-connections.js';
import { ReplicaRoute } from '../../src/proxy/replica-route.js';
import { murmur3Token } from '../../src/routing/murmur3.js';
import { ReplicaRouter } from '../../src/routing/replica-router.js';
import type { Replication } from '../../src/routing/replication.js';
import type { RingNode } from '../../src/routing/token-ring.js';

const key = Buffer.from('partition');
const token = murmur3Token(key);
const node = (host: string, t: bigint): RingNode => ({ host, port: 9042, dataCenter: 'dc1', rack: 'r1', tokens: [t] });
const statement = { query: 'SELECT v FROM ks.t WHERE k = ?', keyspace: 'ks', partitionKey: { keyspace: 'ks', indexes: [0] } };
const execute = (valueNames?: string[]) =>
  encodeExecute({ id: Buffer.alloc(16, 1), parameters: { consistency: 1, values: [key], ...(valueNames ? { valueNames } : {}) } }, 4);

function setup(ring: RingNode[], replication: Replication, options: { sick?: string; auth?: 'none' | 'unsupported' } = {}) {
  const counts = { replica: 0, ordinary: 0 };
  const opened: BackendAddress[] = [];
  const router = new ReplicaRouter(
    () => ({ ring, replication: new Map([['ks', replication]]), localDataCenter: 'dc1' }),
    (n) => n.host !== options.sick,
  );
  const connections = new ReplicaConnections(4, {
    connect: (address) => {
      opened.push(address);
      return new Promise<BackendConnection>(() => undefined);
    },
    timeout: 1000,
    retryAfter: 1000,
  });
  connections.startupSent(Buffer.alloc(0), 0, false);
  connections.startupAnswered(options.auth === 'unsupported' ? Opcode.AUTHENTICATE : Opcode.READY, 'com.example.KerberosAuthenticator');
  const route = new ReplicaRoute(router, connections, {
    replica: { inc: () => void counts.replica++ },
    ordinary: { inc: () => void counts.ordinary++ },
  });
  const primary = (host: string) => ({ closed: false, address: { host, port: 9042 } }) as unknown as BackendConnection;
  return { route, counts, opened, primary };
}

describe('ReplicaRoute', () => {
  it('one node: the client own node, counted as a replica, whatever the key (named values, unreplayable auth)', () => {
    const { route, counts, opened, primary } = setup([node('a', 0n)], { kind: 'simple', factor: 1 }, { auth: 'unsupported' });
    expect(route.target(execute(), 4, statement, primary('a'))).toBeUndefined();
    expect(route.target(execute(['k']), 4, statement, primary('a'))).toBeUndefined();
    expect(counts).toEqual({ replica: 2, ordinary: 0 });
    expect(opened).toEqual([]);
  });

  it('one node that is sick, or a statement without a known key: ordinary', () => {
    const { route, counts, primary } = setup([node('a', 0n)], { kind: 'simple', factor: 1 }, { sick: 'a' });
    expect(route.target(execute(), 4, statement, primary('a'))).toBeUndefined();
    expect(route.target(execute(), 4, { query: 'x', keyspace: 'ks' }, primary('a'))).toBeUndefined();
    expect(counts).toEqual({ replica: 0, ordinary: 2 });
  });

  it('several nodes, RF 1: the key is hashed, and the request goes to its replica over a connection of its own', () => {
    // Clockwise from the key's token: b owns it.
    const ring = [node('a', token - 10n), node('b', token + 1n), node('c', token + 10n)];
    const { route, counts, opened, primary } = setup(ring, { kind: 'simple', factor: 1 });
    expect(route.target(execute(), 4, statement, primary('b'))).toBeUndefined(); // already there
    expect(route.target(execute(), 4, statement, primary('a'))).toBeInstanceOf(Promise);
    expect(opened.map((o) => o.host)).toEqual(['b']);
    expect(route.target(execute(['k']), 4, statement, primary('a'))).toBeUndefined(); // bound by name: cannot tell
    expect(counts).toEqual({ replica: 2, ordinary: 1 });
  });

  it('several nodes, RF covering them all: the client own node, no connection, no hashing', () => {
    const ring = [node('a', token - 10n), node('b', token + 1n), node('c', token + 10n)];
    const { route, counts, opened, primary } = setup(ring, { kind: 'simple', factor: 3 });
    expect(route.target(execute(['k']), 4, statement, primary('c'))).toBeUndefined();
    expect(counts).toEqual({ replica: 1, ordinary: 0 });
    expect(opened).toEqual([]);
  });

  it('is counted in muster_proxy_routed_executes_total when scraped', async () => {
    const metrics = new ProxyMetrics();
    metrics.routedToReplica.inc();
    metrics.routedToReplica.inc();
    metrics.routedOrdinary.inc();
    const text = await metrics.registry.metrics();
    expect(text).toContain('muster_proxy_routed_executes_total{path="replica"} 2');
    expect(text).toContain('muster_proxy_routed_executes_total{path="ordinary"} 1');
    metrics.routedOrdinary.inc();
    expect(await metrics.registry.metrics()).toContain('muster_proxy_routed_executes_total{path="ordinary"} 2');
  });
});
