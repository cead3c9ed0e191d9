// The proxy's Murmur3 against the real Cassandra's token(): random blob keys of every length up to
// four blocks (each tail length, bytes above 0x7f), and composite (int, text) keys through the
// routing key layout. MUSTER_MURMUR3_SEED=<n> replays a run (the seed is printed).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import cassandra from 'cassandra-driver';
import { testServer } from '../../../../scripts/testenv/state.mjs';
import { seeded } from '../adversarial/cases.js';
import type { CassandraEntry } from '../proxy/harness.js';
import { murmur3Token } from '../../src/routing/murmur3.js';
import { routingKey } from '../../src/routing/routing-key.js';

const backend = testServer<CassandraEntry>('cassandra');
const TIMEOUT = 180_000;
const seed = Number(process.env.MUSTER_MURMUR3_SEED ?? Math.floor(Math.random() * 2 ** 31));
const KEYS = Number(process.env.MUSTER_MURMUR3_KEYS ?? 400);

(backend ? describe : describe.skip)(`Murmur3 tokens equal Cassandra's (MUSTER_MURMUR3_SEED=${seed})`, () => {
  let client: cassandra.Client;
  const keyspace = `murmur3_${process.pid}_${Date.now() % 100_000}`;
  const random = seeded(seed);

  beforeAll(async () => {
    console.log(`murmur3 seed ${seed} (replay with MUSTER_MURMUR3_SEED=${seed})`);
    client = new cassandra.Client({ contactPoints: backend!.contactPoints, localDataCenter: backend!.localDataCenter });
    await client.connect();
    await client.execute(`CREATE KEYSPACE ${keyspace} WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`);
    await client.execute(`CREATE TABLE ${keyspace}.blobs (k blob PRIMARY KEY)`);
    await client.execute(`CREATE TABLE ${keyspace}.pairs (a int, b text, PRIMARY KEY ((a, b)))`);
  }, TIMEOUT);

  afterAll(async () => {
    await client?.execute(`DROP KEYSPACE IF EXISTS ${keyspace}`).catch(() => undefined);
    await client?.shutdown();
  }, TIMEOUT);

  /** Runs `insert` for each argument list, 64 at a time. */
  const insertAll = async (query: string, rows: unknown[][]) => {
    for (let i = 0; i < rows.length; i += 64) {
      await Promise.all(rows.slice(i, i + 64).map((params) => client.execute(query, params, { prepare: true })));
    }
  };

  it(
    'blob keys of 1 to 64 bytes',
    async () => {
      const keys = new Map<string, Buffer>();
      while (keys.size < KEYS) {
        const key = random.bytes(1 + random.int(64));
        keys.set(key.toString('hex'), key);
      }
      await insertAll(
        `INSERT INTO ${keyspace}.blobs (k) VALUES (?)`,
        [...keys.values()].map((k) => [k]),
      );
      const rows = (await client.execute(`SELECT k, token(k) AS t FROM ${keyspace}.blobs`, [], { fetchSize: KEYS * 2 })).rows;
      expect(rows).toHaveLength(keys.size);
      const wrong = rows.filter((r) => murmur3Token(r['k'] as Buffer) !== BigInt(String(r['t'])));
      expect(wrong.map((r) => (r['k'] as Buffer).toString('hex'))).toEqual([]);
    },
    TIMEOUT,
  );

  it(
    'composite (int, text) keys',
    async () => {
      const pairs = Array.from({ length: KEYS / 4 }, () => [random.int(2 ** 31) - 2 ** 30, random.bytes(random.int(40)).toString('hex')]);
      await insertAll(`INSERT INTO ${keyspace}.pairs (a, b) VALUES (?, ?)`, pairs);
      const rows = (await client.execute(`SELECT a, b, token(a, b) AS t FROM ${keyspace}.pairs`, [], { fetchSize: KEYS })).rows;
      const wrong = rows.filter((r) => {
        const a = Buffer.alloc(4);
        a.writeInt32BE(r['a'] as number);
        return murmur3Token(routingKey([a, Buffer.from(r['b'] as string)])) !== BigInt(String(r['t']));
      });
      expect(rows.length).toBeGreaterThan(0);
      expect(wrong.map((r) => `${r['a']},${r['b']}`)).toEqual([]);
    },
    TIMEOUT,
  );
});
