// Against a three-node Cassandra: the proxy learns the backend's local-DC nodes from its own
// system.peers, spreads client connections over them, and skips a node that does not answer.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import cassandra from 'cassandra-driver';
import { testServer } from '../../../../scripts/testenv/state.mjs';
import { startProxy, type CassandraEntry, type RunningProxy } from './harness.js';

const backend = testServer<CassandraEntry>('cassandra3');
const TIMEOUT = 120_000;

(backend ? describe : describe.skip)('the proxy in front of three Cassandra nodes', () => {
  let running: RunningProxy;
  beforeAll(async () => {
    // Only the first node as a contact point: the rest must come from the backend's topology.
    running = await startProxy({ ...backend!, contactPoints: [backend!.contactPoints[0]!] });
  }, TIMEOUT);
  afterAll(async () => {
    await running?.stop();
  });

  it(
    'knows every node and spreads client connections over them',
    async () => {
      const topology = running.proxy.topology();
      expect(topology.backend.map((n) => `${n.host}:${n.port}`).sort()).toEqual([...backend!.contactPoints].sort());
      const clients = Array.from(
        { length: 6 },
        () => new cassandra.Client({ contactPoints: [running.address], localDataCenter: backend!.localDataCenter }),
      );
      try {
        await Promise.all(clients.map((c) => c.connect()));
        await Promise.all(clients.map((c) => c.execute('SELECT key FROM system.local')));
        const metrics = await running.proxy.metrics.registry.getSingleMetric('muster_proxy_backend_connections')!.get();
        const perNode = metrics.values.filter((v) => v.value > 0).map((v) => String(v.labels.node));
        // Every node serves some client connection; the driver's own view stays the proxy.
        expect(new Set(perNode).size).toBe(3);
        expect(clients.every((c) => c.hosts.keys().length === 1)).toBe(true);
      } finally {
        await Promise.all(clients.map((c) => c.shutdown()));
      }
    },
    TIMEOUT,
  );
});

const single = testServer<CassandraEntry>('cassandra');
(single ? describe : describe.skip)('a backend node that does not answer', () => {
  it('is skipped for the next one', async () => {
    const { BackendPool } = await import('../../src/proxy/backend-pool.js');
    const { NodeHealth } = await import('../../src/proxy/node-health.js');
    // Nothing tracked: every node counts as healthy, so the pool's own connect failure is what skips it.
    const health = new NodeHealth({ interval: 60_000, timeout: 1000, connect: () => Promise.reject(new Error('not probed')) });
    const { freePort } = await import('./harness.js');
    const [host, port] = single!.contactPoints[0]!.split(':');
    const dead = { host: '127.0.0.1', port: await freePort(), dataCenter: 'datacenter1', hostId: undefined };
    const live = { host: host!, port: Number(port), dataCenter: 'datacenter1', hostId: undefined };
    const counts: string[] = [];
    const pool = new BackendPool({ view: { nodes: [dead, live] }, health } as never, {
      connectTimeout: 2000,
      maxBodyLength: 1 << 20,
      heartbeatInterval: 30_000,
      onCount: (node, delta) => counts.push(`${node} ${delta > 0 ? '+' : '-'}`),
    });
    const connection = await pool.connect(4, () => undefined);
    expect(connection.address).toEqual({ host: live.host, port: live.port });
    connection.close();
  });
});
