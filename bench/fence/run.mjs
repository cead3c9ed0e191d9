// Write latency of fenced writes (@muster/fence-cassandra: one LWT batch per write) against plain
// writes of the same statement, interleaved in one run against the testenv Cassandra
// (`npm run testenv -- up cassandra`), so both see the same load. Prints, never asserts.
// Build first (npx tsc -b): this imports the packages' dist output, as an application would.
//   node bench/fence/run.mjs        WRITES=500 (each kind) WARMUP=50 SERVER=cassandra PROXY=0|1 RF=1
//   SERVER=cassandra3 RF=3 node bench/fence/run.mjs   (three replicas: Paxos rounds cross nodes)
import cassandra from 'cassandra-driver';
import { performance } from 'node:perf_hooks';
import { readState } from '../../scripts/testenv/state.mjs';

const WRITES = Number(process.env.WRITES ?? 500);
const WARMUP = Number(process.env.WARMUP ?? 50);
const SERVER = process.env.SERVER ?? 'cassandra';
const RF = Number(process.env.RF ?? 1);
const entry = readState()[SERVER];
if (!entry) {
  console.error(`fence bench: no '${SERVER}' server; start it with: npm run testenv -- up ${SERVER}`);
  process.exit(1);
}
const { CassandraFence } = await import('@muster/fence-cassandra');

let proxy;
let contactPoints = entry.contactPoints;
if (process.env.PROXY === '1') {
  // Through one Muster CQL proxy in front of the server, as an application behind the proxy writes.
  const { startProxy } = await import('@muster/cql-proxy');
  const { default: pino } = await import('pino');
  proxy = await startProxy(
    {
      discovery: { adapter: 'static', options: { members: [{ id: 'bench-0', address: '127.0.0.1', port: 1 }], self: 'bench-0' } },
      proxy: { listen: { port: 0 }, http: { port: 0 }, backend: { contactPoints } },
    },
    { logger: pino({ level: 'silent' }) },
  );
  contactPoints = [`127.0.0.1:${proxy.port}`];
}

function summary(ms) {
  const s = [...ms].sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))].toFixed(2);
  return `n=${s.length} p50=${q(0.5)} p90=${q(0.9)} p99=${q(0.99)} max=${s.at(-1).toFixed(2)} ms`;
}

const client = new cassandra.Client({
  contactPoints,
  localDataCenter: entry.localDataCenter,
  socketOptions: { readTimeout: 60_000 },
  ...(proxy ? { protocolOptions: { port: proxy.port } } : {}),
});
const keyspace = `muster_fence_bench_rf${RF}`;
const table = `tasks_${Date.now().toString(36)}`;
try {
  await client.connect();
  await client.execute(
    `CREATE KEYSPACE IF NOT EXISTS ${keyspace} WITH replication = {'class': 'SimpleStrategy', 'replication_factor': ${RF}}`,
  );
  await client.execute(`CREATE TABLE ${keyspace}.${table} (scheduler text, id text, state text, PRIMARY KEY (scheduler, id))`);
  const fence = new CassandraFence(client, { keyspace, table, partitionKey: ['scheduler'] });
  await fence.ensureSchema();
  const lease = { name: 'bench', token: BigInt(Date.now()) * 1000n };
  const update = `UPDATE ${keyspace}.${table} SET state = ? WHERE scheduler = ? AND id = ?`;
  // Same statement, same consistency (QUORUM); the fenced one adds the LWT on the fence column.
  // Fenced writes go to partition 'fenced', plain ones to 'plain' (a plain write to a fenced
  // partition is what the README says not to do).
  const kinds = {
    fenced: (i) => fence.write(lease, ['fenced'], [{ query: update, params: [`v${i}`, 'fenced', `t${i % 100}`] }]),
    plain: (i) =>
      client.execute(update, [`v${i}`, 'plain', `t${i % 100}`], { prepare: true, consistency: cassandra.types.consistencies.quorum }),
  };
  const times = { fenced: [], plain: [] };
  for (let i = 0; i < WARMUP + WRITES; i++) {
    // Alternate which kind goes first, so neither always follows the other.
    for (const kind of i % 2 === 0 ? ['fenced', 'plain'] : ['plain', 'fenced']) {
      const start = performance.now();
      await kinds[kind](i);
      if (i >= WARMUP) times[kind].push(performance.now() - start);
    }
  }
  // The proxy does not serve the backend's settings table: then the line just lacks them.
  const settings = await client
    .execute("SELECT name, value FROM system_views.settings WHERE name IN ('paxos_variant', 'cas_contention_timeout')")
    .catch(() => ({ rows: [] }));
  console.log(
    `fence bench: ${SERVER}${proxy ? ' through one Muster CQL proxy' : ' direct'}, ${WRITES} writes of each kind, interleaved, one at a time, after ${WARMUP} warm-up, replication factor ${RF} (${settings.rows.map((r) => `${r.name} ${r.value}`).join(', ')})`,
  );
  console.log(`  plain  (UPDATE at QUORUM)                         ${summary(times.plain)}`);
  console.log(`  fenced (LWT batch IF fence <= token, SERIAL/QUORUM) ${summary(times.fenced)}`);
  const p50 = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
  console.log(`  fenced / plain at p50: ${(p50(times.fenced) / p50(times.plain)).toFixed(1)}x`);
  await client.execute(`DROP TABLE IF EXISTS ${keyspace}.${table}`);
} finally {
  await client.shutdown();
  await proxy?.close();
}
