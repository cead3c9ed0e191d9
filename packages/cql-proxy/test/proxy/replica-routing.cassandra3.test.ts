// Replica-aware forwarding against three real Cassandra nodes. A keyspace of replication factor 1
// makes a non-replica coordinator visible: the backend's own tracing names the node that
// coordinated each request, and a token-aware driver connected directly names each key's replica.
// Through the proxy the client is NOT token-aware towards the real nodes (it sees one proxy and
// uses one connection), so only the proxy can put each EXECUTE on its replica.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import cassandra from 'cassandra-driver';
import { testServer } from '../../../../scripts/testenv/state.mjs';
import { FrameFlag, Opcode } from '../../src/protocol/frame.js';
import { encodeExecute, encodePrepare, encodeStartup } from '../../src/protocol/requests.js';
import { decodeResult } from '../../src/protocol/result.js';
import { startProxy, until, type CassandraEntry, type RunningProxy } from './harness.js';
import { RawClient } from './raw-client.js';

const backend = testServer<CassandraEntry>('cassandra3');
const TIMEOUT = 300_000;
/** Keys executed per case; each is traced and its coordinator read back. */
const KEYS = Number(process.env.MUSTER_ROUTING_KEYS ?? 24);

const int32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
};
const composite = (parts: Buffer[]) =>
  Buffer.concat(parts.flatMap((p) => [Buffer.from([p.length >> 8, p.length & 0xff]), p, Buffer.from([0])]));

(backend ? describe : describe.skip)('replica-aware forwarding (three backend nodes, replication factor 1)', () => {
  let running: RunningProxy;
  /** Token-aware, straight to the real nodes: the oracle for replicas, and the reader of traces. */
  let direct: cassandra.Client;
  const keyspace = `routing_${process.pid}_${Date.now() % 100_000}`;
  const clients: cassandra.Client[] = [];

  const proxyClient = async (options: Partial<cassandra.ClientOptions> = {}) => {
    const client = new cassandra.Client({
      contactPoints: [running.address],
      localDataCenter: backend!.localDataCenter,
      // One connection to the one proxy: the driver cannot route by token to the real nodes.
      pooling: { coreConnectionsPerHost: { [cassandra.types.distance.local]: 1 } },
      socketOptions: { readTimeout: 60_000 },
      ...options,
    });
    await client.connect();
    clients.push(client);
    return client;
  };

  /** The node that coordinated a traced request, from the backend's own trace tables. */
  const coordinator = (traceId: cassandra.types.Uuid) =>
    until(
      `the trace ${String(traceId)} to be written`,
      async () => {
        const rs = await direct.execute('SELECT coordinator FROM system_traces.sessions WHERE session_id = ?', [traceId], {
          prepare: true,
          consistency: cassandra.types.consistencies.one,
        });
        return rs.first()?.['coordinator']?.toString() as string | undefined;
      },
      30_000,
    );

  const replicaOf = (routingKey: Buffer) => {
    const hosts = direct.getReplicas(keyspace, routingKey);
    expect(hosts).toHaveLength(1);
    return hosts[0]!.address.split(':')[0]!;
  };

  /** Runs `execute` for each key traced; returns [key, coordinator, replica] for each. */
  const landings = async (
    keys: number[],
    routingKey: (k: number) => Buffer,
    execute: (k: number) => Promise<cassandra.types.ResultSet>,
  ) => {
    const out: { key: number; coordinator: string; replica: string }[] = [];
    for (const key of keys) {
      const result = await execute(key);
      out.push({ key, coordinator: await coordinator(result.info.traceId), replica: replicaOf(routingKey(key)) });
    }
    return out;
  };

  beforeAll(async () => {
    // Probes once an hour: a node marked sick by the test stays sick until it is done.
    running = await startProxy(backend!, { proxy: { backend: { contactPoints: backend!.contactPoints, probeInterval: 3_600_000 } } });
    direct = new cassandra.Client({ contactPoints: backend!.contactPoints, localDataCenter: backend!.localDataCenter });
    await direct.connect();
    // DDL through the proxy: its answer comes once the proxy has re-read the schema, replication included.
    const ddl = await proxyClient();
    await ddl.execute(`CREATE KEYSPACE ${keyspace} WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`);
    await ddl.execute(`CREATE TABLE ${keyspace}.single (k int PRIMARY KEY, v text)`);
    await ddl.execute(`CREATE TABLE ${keyspace}.pair (a int, b text, c int, v text, PRIMARY KEY ((a, b), c))`);
    await direct.metadata.refreshKeyspace(keyspace);
  }, TIMEOUT);

  afterAll(async () => {
    for (const client of clients) await client.shutdown().catch(() => undefined);
    await direct?.execute(`DROP KEYSPACE IF EXISTS ${keyspace}`).catch(() => undefined);
    await direct?.shutdown();
    await running?.stop();
  }, TIMEOUT);

  const keys = Array.from({ length: KEYS }, (_, i) => i * 7919 + 1);

  it(
    'each EXECUTE is coordinated by the replica of its partition (single and composite keys); the statement is prepared there on first use',
    async () => {
      const client = await proxyClient();
      const reprepared = async () =>
        (await running.proxy.metrics.registry.getSingleMetric('muster_proxy_errors_total')!.get()).values.find(
          (v) => v.labels.kind === 'reprepared',
        )?.value ?? 0;
      const before = await reprepared();
      const single = await landings(
        keys,
        (k) => int32(k),
        (k) => client.execute(`INSERT INTO ${keyspace}.single (k, v) VALUES (?, ?)`, [k, 'x'], { prepare: true, traceQuery: true }),
      );
      const pair = await landings(
        keys,
        (k) => composite([int32(k), Buffer.from(`b${k}`)]),
        (k) => client.execute(`SELECT v FROM ${keyspace}.pair WHERE a = ? AND b = ?`, [k, `b${k}`], { prepare: true, traceQuery: true }),
      );
      const missed = [...single, ...pair].filter((l) => l.coordinator !== l.replica);
      const nodes = new Set(single.map((l) => l.replica));
      console.log(
        `replica routing: ${single.length + pair.length} traced EXECUTEs over replicas ${[...nodes].join(', ')}; ` +
          `${missed.length} coordinated elsewhere; re-prepared on a replica ${(await reprepared()) - before} times`,
      );
      const routed = (await running.proxy.metrics.registry.getSingleMetric('muster_proxy_routed_executes_total')!.get()).values;
      expect(routed.find((v) => v.labels.path === 'replica')?.value).toBeGreaterThanOrEqual(single.length + pair.length);
      expect(nodes.size).toBe(3);
      expect(missed).toEqual([]);
      // Prepared through the client's first connection only: every other node needed it once.
      expect((await reprepared()) - before).toBeGreaterThan(0);
    },
    TIMEOUT,
  );

  it(
    'after USE, an unqualified statement is prepared again on the replica in the same keyspace',
    async () => {
      const client = await proxyClient({ keyspace });
      const landed = await landings(
        keys,
        (k) => int32(k),
        (k) => client.execute('SELECT v FROM single WHERE k = ?', [k], { prepare: true, traceQuery: true }),
      );
      expect(landed.filter((l) => l.coordinator !== l.replica)).toEqual([]);
    },
    TIMEOUT,
  );

  it(
    'a v5 client with LZ4 segments: the replica connection speaks segments too',
    async () => {
      const raw = await RawClient.open(running.address);
      try {
        raw.send(
          5,
          1,
          Opcode.STARTUP,
          encodeStartup({
            options: new Map([
              ['CQL_VERSION', '3.0.0'],
              ['COMPRESSION', 'lz4'],
            ]),
          }),
        );
        expect((await raw.next(1))?.opcode).toBe(Opcode.READY);
        raw.useSegments(true);
        raw.send(5, 2, Opcode.PREPARE, encodePrepare({ query: `SELECT v FROM ${keyspace}.single WHERE k = ?` }, 5));
        const prepared = decodeResult((await raw.next(2))!.body, 5);
        if (prepared.kind !== 'Prepared') throw new Error(`PREPARE answered ${prepared.kind}`);
        let stream = 10;
        const landed = await landings(keys, int32, async (k) => {
          const id = stream++;
          const body = encodeExecute(
            { id: prepared.id, resultMetadataId: prepared.resultMetadataId!, parameters: { consistency: 1, values: [int32(k)] } },
            5,
          );
          raw.send(5, id, Opcode.EXECUTE, body, FrameFlag.TRACING);
          const answer = (await raw.next(id))!;
          expect(answer.opcode).toBe(Opcode.RESULT);
          return { info: { traceId: new cassandra.types.Uuid(Buffer.from(answer.body.subarray(0, 16))) } } as cassandra.types.ResultSet;
        });
        expect(landed.filter((l) => l.coordinator !== l.replica)).toEqual([]);
      } finally {
        raw.close();
      }
    },
    TIMEOUT,
  );

  // Leaves a node sick for the rest of the file (probes are an hour apart): routing tests go above.
  it(
    'a replica the proxy marks sick is never sent a request; its keys take the ordinary path',
    async () => {
      const client = await proxyClient();
      const statement = `SELECT v FROM ${keyspace}.single WHERE k = ?`;
      const execute = (k: number) => client.execute(statement, [k], { prepare: true, traceQuery: true });
      const warm = await landings(keys, int32, execute);
      const sick = warm.find((l) => l.replica !== warm[0]!.coordinator)!.replica;
      const port = Number(backend!.contactPoints[0]!.split(':')[1]);
      running.proxy.backendHealth.connectFailed({ host: sick, port }, 'marked sick by the test');
      expect(running.proxy.backendHealth.isHealthy({ host: sick, port })).toBe(false);
      // The client's connections on the sick node were closed; the driver reconnects to the proxy.
      const landed = await landings(keys, int32, (k) => until(`key ${k} to be answered`, () => execute(k).catch(() => undefined), 60_000));
      const onSick = landed.filter((l) => l.coordinator === sick);
      const elsewhere = landed.filter((l) => l.replica !== sick && l.coordinator !== l.replica);
      console.log(
        `sick replica ${sick}: ${landed.filter((l) => l.replica === sick).length} of its keys went elsewhere, ${onSick.length} reached it`,
      );
      expect(onSick).toEqual([]);
      expect(elsewhere).toEqual([]);
    },
    TIMEOUT,
  );

  it(
    'routing.replicas: false keeps every request of a client on one node',
    async () => {
      const plain = await startProxy(backend!, { proxy: { routing: { replicas: false } } });
      try {
        const client = new cassandra.Client({
          contactPoints: [plain.address],
          localDataCenter: backend!.localDataCenter,
          pooling: { coreConnectionsPerHost: { [cassandra.types.distance.local]: 1 } },
        });
        await client.connect();
        clients.push(client);
        const landed = await landings(keys.slice(0, 9), int32, (k) =>
          client.execute(`SELECT v FROM ${keyspace}.single WHERE k = ?`, [k], { prepare: true, traceQuery: true }),
        );
        expect(new Set(landed.map((l) => l.coordinator)).size).toBe(1);
      } finally {
        await plain.stop();
      }
    },
    TIMEOUT,
  );
});
