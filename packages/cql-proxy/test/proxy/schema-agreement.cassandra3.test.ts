// Schema agreement through the proxy, against three Cassandra nodes: a driver that spreads its
// connections over the nodes (through one proxy) creates tables and writes to each at once. The
// driver's own wait for agreement reads the proxy's one schema_version, so only the proxy can make
// sure the next statement, on another connection and so another node, finds the table.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import cassandra from 'cassandra-driver';
import { testServer } from '../../../../scripts/testenv/state.mjs';
import { startProxy, type CassandraEntry, type RunningProxy } from './harness.js';

const backend = testServer<CassandraEntry>('cassandra3');
const TIMEOUT = 300_000;
/** Tables created; each is written to at once over every connection of the driver. */
const TABLES = Number(process.env.MUSTER_SCHEMA_TABLES ?? 10);

(backend ? describe : describe.skip)('schema agreement through the proxy (three backend nodes)', () => {
  let running: RunningProxy;
  let client: cassandra.Client;
  const keyspace = `agreement_${process.pid}_${Date.now() % 100_000}`;

  beforeAll(async () => {
    running = await startProxy(backend!);
    client = new cassandra.Client({
      contactPoints: [running.address],
      localDataCenter: backend!.localDataCenter,
      // Three connections to the one proxy host: the proxy pins each to a node, round robin.
      pooling: { coreConnectionsPerHost: { [cassandra.types.distance.local]: 3 } },
      socketOptions: { readTimeout: 60_000 },
    });
    await client.connect();
    await client.execute(`CREATE KEYSPACE ${keyspace} WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}`);
  }, TIMEOUT);

  afterAll(async () => {
    await client?.execute(`DROP KEYSPACE IF EXISTS ${keyspace}`).catch(() => undefined);
    await client?.shutdown();
    await running?.stop();
  }, TIMEOUT);

  it(
    'a table created through the proxy is known to every node before the DDL is answered',
    async () => {
      const connections = await running.proxy.metrics.registry.getSingleMetric('muster_proxy_backend_connections')!.get();
      const nodes = connections.values.filter((v) => v.value > 0).map((v) => String(v.labels.node));
      const failures: string[] = [];
      const started = Date.now();
      for (let i = 0; i < TABLES; i++) {
        await client.execute(`CREATE TABLE ${keyspace}.t${i} (id int PRIMARY KEY, v text)`);
        // One write per driver connection (the driver takes the least busy one), all at once.
        // Half prepared (PREPARE on one node, EXECUTE maybe on another), half plain QUERY.
        const writes = Array.from({ length: 6 }, (_, k) =>
          k % 2 === 0
            ? client.execute(`INSERT INTO ${keyspace}.t${i} (id, v) VALUES (?, ?)`, [k, 'x'], { prepare: true })
            : client.execute(`INSERT INTO ${keyspace}.t${i} (id, v) VALUES (${k}, 'x')`),
        );
        for (const outcome of await Promise.allSettled(writes)) {
          if (outcome.status === 'rejected') failures.push(`t${i}: ${(outcome.reason as Error).message}`);
        }
      }
      const agreed = await running.proxy.metrics.registry.getSingleMetric('muster_proxy_schema_agreement_waits_total')?.get();
      console.log(
        `schema agreement: ${TABLES} CREATE TABLE + 6 immediate writes each, backend nodes in use ${nodes.join(', ')}; ` +
          `${failures.length} writes failed; ${((Date.now() - started) / 1000).toFixed(1)} s; ` +
          `waits ${JSON.stringify(agreed?.values.map((v) => [v.labels.outcome, v.value]) ?? [])}`,
      );
      expect(nodes.length).toBeGreaterThan(1);
      expect(failures).toEqual([]);
    },
    TIMEOUT,
  );
});
