// One proxy in front of the real Cassandra, driven by the DataStax Node.js driver: everything a
// client does on a normal day works through it.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import cassandra from 'cassandra-driver';
import { testServer } from '../../../../scripts/testenv/state.mjs';
import { startProxy, type CassandraEntry, type RunningProxy } from './harness.js';

const backend = testServer<CassandraEntry>('cassandra');
const TIMEOUT = 120_000;

(backend ? describe : describe.skip)('one proxy, cassandra-driver', () => {
  let running: RunningProxy;
  let client: cassandra.Client;
  const ks = `px_${Date.now().toString(36)}`;

  beforeAll(async () => {
    running = await startProxy(backend!, { proxy: { tokens: { perInstance: 16 } } });
    client = new cassandra.Client({ contactPoints: [running.address], localDataCenter: backend!.localDataCenter });
    await client.connect();
    await client.execute(`CREATE KEYSPACE ${ks} WITH replication = {'class':'SimpleStrategy','replication_factor':1}`);
    await client.execute(`CREATE TABLE ${ks}.kv (k text PRIMARY KEY, v int)`);
  }, TIMEOUT);

  afterAll(async () => {
    await client?.execute(`DROP KEYSPACE IF EXISTS ${ks}`).catch(() => undefined);
    await client?.shutdown();
    await running?.stop();
  }, TIMEOUT);

  it('sees only the proxy as the cluster', () => {
    const hosts = client
      .getState()
      .getConnectedHosts()
      .map((h) => h.address);
    expect(hosts).toEqual([running.address]);
    expect(client.hosts.keys()).toEqual([running.address]);
    // proxy.tokens.perInstance reaches system.local.tokens.
    expect(client.hosts.values()[0]!.tokens.length).toBe(16);
  });

  it('reports the backend release version', async () => {
    const row = (await client.execute('SELECT release_version FROM system.local')).first();
    expect(row.get('release_version')).toBe(backend!.version);
  });

  it(
    'CRUD with prepared statements',
    async () => {
      await client.execute(`INSERT INTO ${ks}.kv (k, v) VALUES (?, ?)`, ['a', 1], { prepare: true });
      await client.execute(`UPDATE ${ks}.kv SET v = ? WHERE k = ?`, [2, 'a'], { prepare: true });
      expect((await client.execute(`SELECT v FROM ${ks}.kv WHERE k = ?`, ['a'], { prepare: true })).first().get('v')).toBe(2);
      await client.execute(`DELETE FROM ${ks}.kv WHERE k = ?`, ['a'], { prepare: true });
      expect((await client.execute(`SELECT v FROM ${ks}.kv WHERE k = ?`, ['a'], { prepare: true })).rowLength).toBe(0);
    },
    TIMEOUT,
  );

  it(
    'batches',
    async () => {
      await client.batch(
        [
          { query: `INSERT INTO ${ks}.kv (k, v) VALUES (?, ?)`, params: ['b1', 1] },
          { query: `INSERT INTO ${ks}.kv (k, v) VALUES (?, ?)`, params: ['b2', 2] },
        ],
        { prepare: true },
      );
      const rows = (await client.execute(`SELECT k FROM ${ks}.kv WHERE k IN ('b1','b2')`)).rows.map((r) => r.get('k')).sort();
      expect(rows).toEqual(['b1', 'b2']);
    },
    TIMEOUT,
  );

  it(
    'pages through a result',
    async () => {
      await Promise.all(
        Array.from({ length: 25 }, (_, i) => client.execute(`INSERT INTO ${ks}.kv (k, v) VALUES (?, ?)`, [`p${i}`, i], { prepare: true })),
      );
      const seen: string[] = [];
      let pageState: string | undefined;
      do {
        const page = await client.execute(`SELECT k FROM ${ks}.kv`, [], { prepare: true, fetchSize: 7, pageState });
        seen.push(...page.rows.map((r) => String(r.get('k'))));
        pageState = page.pageState ?? undefined;
      } while (pageState);
      expect(seen.filter((k) => k.startsWith('p')).length).toBe(25);
    },
    TIMEOUT,
  );

  it(
    'USE switches the keyspace of a connection',
    async () => {
      const c = new cassandra.Client({ contactPoints: [running.address], localDataCenter: backend!.localDataCenter, keyspace: ks });
      try {
        await c.connect();
        await c.execute(`INSERT INTO kv (k, v) VALUES ('use', 7)`);
        expect((await c.execute(`SELECT v FROM kv WHERE k = 'use'`)).first().get('v')).toBe(7);
      } finally {
        await c.shutdown();
      }
    },
    TIMEOUT,
  );
});
