// Smoke test for the three-node Cassandra cluster from `npm run testenv -- up cassandra3`: the
// driver discovers all three nodes from one contact point, and a row written at QUORUM into a
// keyspace replicated three times reads back at ALL (so every replica answered).
import { describe, it, expect } from '@jest/globals';
import { Client, types } from 'cassandra-driver';
import { testServer } from '../state.mjs';

// Schema changes and first connections are slow on a busy 2-core machine; jest's default is 5 s.
const SCHEMA_TIMEOUT_MS = 120_000;

interface CassandraEntry {
  contactPoints: string[];
  localDataCenter: string;
  version: string;
}

const cluster = testServer<CassandraEntry>('cassandra3');
(cluster ? describe : describe.skip)('cassandra3 (three nodes)', () => {
  const entry = cluster as CassandraEntry;

  it(
    'has three nodes up, each on 5.0.x',
    async () => {
      const c = new Client({ contactPoints: entry.contactPoints.slice(0, 1), localDataCenter: entry.localDataCenter });
      try {
        await c.connect();
        const hosts = c.hosts.values();
        expect(hosts.map((h) => h.address.split(':')[0]).sort()).toEqual(['127.0.0.1', '127.0.0.2', '127.0.0.3']);
        for (const h of hosts) expect(h.cassandraVersion).toMatch(/^5\.0\.\d+$/);
        const peers = (await c.execute('SELECT peer FROM system.peers')).rows;
        expect(peers).toHaveLength(2);
      } finally {
        await c.shutdown();
      }
    },
    SCHEMA_TIMEOUT_MS,
  );

  it(
    'replicates a row to all three nodes',
    async () => {
      const c = new Client({ contactPoints: entry.contactPoints, localDataCenter: entry.localDataCenter });
      const ks = `smoke3_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 7)}`;
      try {
        await c.connect();
        await c.execute(`CREATE KEYSPACE ${ks} WITH replication = {'class': 'NetworkTopologyStrategy', '${entry.localDataCenter}': 3}`);
        await c.execute(`CREATE TABLE ${ks}.kv (k text PRIMARY KEY, v int)`);
        const { quorum, all } = types.consistencies;
        await c.execute(`INSERT INTO ${ks}.kv (k, v) VALUES (?, ?)`, ['answer', 42], { prepare: true, consistency: quorum });
        const row = (await c.execute(`SELECT v FROM ${ks}.kv WHERE k = ?`, ['answer'], { prepare: true, consistency: all })).first();
        expect(row.get('v')).toBe(42);
        const replicas = c.getReplicas(ks, Buffer.from('answer'));
        expect(replicas).toHaveLength(3);
      } finally {
        await c.execute(`DROP KEYSPACE IF EXISTS ${ks}`).catch(() => undefined);
        await c.shutdown();
      }
    },
    SCHEMA_TIMEOUT_MS,
  );
});
