// The same client load run direct to Cassandra and through the proxy, in one run: throughput and
// p50/p99/p999 latency of each, and their ratio. Prints; never asserts.
//   npm run testenv -- up cassandra && npx tsc -b && node bench/proxy/run.mjs
// Env: BENCH_SECONDS (per phase, default 10), CONCURRENCY (default 32), ROUNDS (default 2), PROXY_NODE_ARGS.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import cassandra from 'cassandra-driver';
import { readState } from '../../scripts/testenv/state.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const concurrency = Number(process.env.CONCURRENCY ?? 32);
const rounds = Number(process.env.ROUNDS ?? 2);
const backend = readState().cassandra;
if (!backend) throw new Error('start Cassandra first: npm run testenv -- up cassandra');

/** CPU seconds a process has used (user + system), from /proc; undefined where there is none. */
function cpuSeconds(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ = 100)
  } catch {
    return undefined;
  }
}
const cassandraPid = backend.nodes?.[0]?.pid;

const freePort = () =>
  new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

async function startProxy() {
  const [port, http] = [await freePort(), await freePort()];
  const dir = mkdtempSync(join(tmpdir(), 'muster-bench-proxy-'));
  const config = join(dir, 'proxy.yaml');
  writeFileSync(
    config,
    `discovery:
  adapter: static
  options: { service: muster-cql-proxy, members: [{ id: bench-0, address: 127.0.0.1, port: ${port} }], self: bench-0 }
heartbeat: { adapter: static }
proxy:
  listen: { host: 127.0.0.1, port: ${port} }
  http: { host: 127.0.0.1, port: ${http} }
  backend: { contactPoints: [${backend.contactPoints.join(', ')}] }
  log: { level: warn }
`,
  );
  // PROXY_NODE_ARGS, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof", profiles the proxy under this load.
  const nodeArgs = (process.env.PROXY_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, join(here, '../../packages/cql-proxy/dist/cli.js'), '--config', config], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  for (let i = 0; i < 100; i++) {
    const ready = await fetch(`http://127.0.0.1:${http}/health/readiness`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) return { child, address: `127.0.0.1:${port}` };
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill();
  throw new Error('proxy did not become ready');
}

async function load(contactPoint, label, proxyPid) {
  const client = new cassandra.Client({
    contactPoints: [contactPoint],
    localDataCenter: backend.localDataCenter,
    pooling: { coreConnectionsPerHost: { [cassandra.types.distance.local]: 2 } },
  });
  await client.connect();
  await client.execute("CREATE KEYSPACE IF NOT EXISTS bench WITH replication = {'class':'SimpleStrategy','replication_factor':1}");
  await client.execute('CREATE TABLE IF NOT EXISTS bench.kv (k int PRIMARY KEY, v text)');
  const write = 'INSERT INTO bench.kv (k, v) VALUES (?, ?)';
  const read = 'SELECT v FROM bench.kv WHERE k = ?';
  for (let i = 0; i < 200; i++) await client.execute(write, [i, `value-${i}`], { prepare: true });
  const latencies = [];
  let errors = 0;
  const cpuBefore = { proxy: proxyPid && cpuSeconds(proxyPid), cassandra: cpuSeconds(cassandraPid), driver: process.cpuUsage() };
  const end = Date.now() + seconds * 1000;
  let n = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (Date.now() < end) {
        const i = n++ % 200;
        const t = process.hrtime.bigint();
        try {
          if (i % 2) await client.execute(read, [i], { prepare: true });
          else await client.execute(write, [i, `value-${n}`], { prepare: true });
          latencies.push(Number(process.hrtime.bigint() - t) / 1e6);
        } catch {
          errors++;
        }
      }
    }),
  );
  const driverCpu = process.cpuUsage(cpuBefore.driver);
  // CPU per request in µs: what each process spent on the load (the proxy's is its whole cost).
  const perOp = (before, after) => (before === undefined || after === undefined ? undefined : ((after - before) * 1e6) / latencies.length);
  const cpu = {
    proxy: proxyPid ? perOp(cpuBefore.proxy, cpuSeconds(proxyPid)) : undefined,
    cassandra: perOp(cpuBefore.cassandra, cpuSeconds(cassandraPid)),
    driver: (driverCpu.user + driverCpu.system) / latencies.length,
  };
  await client.shutdown();
  latencies.sort((a, b) => a - b);
  const q = (p) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))];
  return { label, ops: latencies.length / seconds, p50: q(0.5), p99: q(0.99), p999: q(0.999), errors, cpu };
}

const proxy = await startProxy();
const results = { direct: [], proxy: [] };
try {
  for (let r = 0; r < rounds; r++) {
    results.direct.push(await load(backend.contactPoints[0], 'direct'));
    results.proxy.push(await load(proxy.address, 'proxy', proxy.child.pid));
  }
} finally {
  proxy.child.kill('SIGTERM');
}
const best = (xs) => xs.reduce((a, b) => (b.ops > a.ops ? b : a));
const d = best(results.direct);
const p = best(results.proxy);
const us = (v) => (v === undefined ? '-' : `${v.toFixed(0)} µs`);
const fmt = (x) =>
  `${x.label.padEnd(7)} ${x.ops.toFixed(0).padStart(8)} ops/s  p50 ${x.p50.toFixed(3)} ms  p99 ${x.p99.toFixed(3)} ms  p999 ${x.p999.toFixed(3)} ms  errors ${x.errors}` +
  `  CPU/request: driver ${us(x.cpu.driver)}, Cassandra ${us(x.cpu.cassandra)}, proxy ${us(x.cpu.proxy)}`;
console.log(
  `bench/proxy: cassandra-driver, ${concurrency} concurrent, 50/50 prepared read/write, ${seconds} s per phase, best of ${rounds} rounds`,
);
console.log(fmt(d));
console.log(fmt(p));
console.log(`ratio: throughput ${(p.ops / d.ops).toFixed(3)} (goal ≥ 0.90), added p99 ${(p.p99 - d.p99).toFixed(3)} ms (goal ≤ 0.3 ms)`);
