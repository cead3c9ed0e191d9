// Backend faults under a steady driver load through one proxy in front of three Cassandra nodes:
// a SIGSTOPped node (still accepts TCP), the control connection's node SIGSTOPped, every node
// SIGSTOPped (readiness 503), and a SIGKILLed node that is then restarted. Timings are printed,
// never asserted; the assertions are bounded counts (no request waited out a timeout) and
// conditions waited for (the proxy stops using the sick node).
//
// It stops and kills nodes of the cassandra3 it is given and restores them (SIGCONT, restart) before
// it ends. Jest runs test files one at a time on CI's 2 cores (maxWorkers = cores - 1), so CI uses
// the shared cluster; while developing, run it against a private one:
//   MUSTER_TESTENV_DIR=/tmp/health-testenv MUSTER_CASSANDRA_ADDRESS_BASE=127.0.1. npm run testenv -- up cassandra3
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import cassandra from 'cassandra-driver';
import { putEntry, testServer } from '../../../../scripts/testenv/state.mjs';
import { execFile } from 'node:child_process';
import { get } from 'node:http';
import { fileURLToPath } from 'node:url';
import { startProxy, until, type CassandraEntry, type RunningProxy } from './harness.js';
import { SteadyLoad, type LoadWindow } from './steady-load.js';

interface NodeEntry {
  id: string;
  host: string;
  nativePort: number;
  pid: number;
}
type Cassandra3 = CassandraEntry & { nodes: NodeEntry[] };

const backend = testServer<Cassandra3>('cassandra3');
const TIMEOUT = 300_000;
/** The proxy's default request timeout: a request that took this long waited it out. */
const REQUEST_TIMEOUT_MS = 12_000;
const RATE = Number(process.env.MUSTER_FAULT_RATE ?? 200);

const servers = fileURLToPath(new URL('../../../../scripts/testenv/servers/cassandra3.mjs', import.meta.url));
/**
 * Starts a killed node again, in a child process: the testenv's readiness polling leaves driver
 * timers behind that would keep jest from exiting. Resolves the entry with the new pid.
 */
function restartNode(entry: Cassandra3, id: string): Promise<Cassandra3> {
  const script =
    `const { restartNode } = await import(${JSON.stringify(servers)});` +
    `const entry = await restartNode(JSON.parse(process.env.ENTRY), process.env.NODE_ID);` +
    `process.stdout.write(JSON.stringify(entry)); process.exit(0);`;
  return new Promise((resolve, reject) =>
    execFile(
      process.execPath,
      ['--input-type=module', '-e', script],
      { env: { ...process.env, ENTRY: JSON.stringify(entry), NODE_ID: id }, maxBuffer: 1 << 20 },
      (error, stdout, stderr) =>
        error ? reject(new Error(`restarting ${id} failed: ${stderr}`, { cause: error })) : resolve(JSON.parse(stdout) as Cassandra3),
    ),
  );
}

/** GET /health/readiness without keep-alive (nothing of it outlives the test). */
function readiness(port: number): Promise<{ status: number; body: { checks: Record<string, unknown> } }> {
  return new Promise((resolve, reject) => {
    get({ host: '127.0.0.1', port, path: '/health/readiness', agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as { checks: Record<string, unknown> } }));
    }).on('error', reject);
  });
}

const signal = (pid: number, name: NodeJS.Signals) => {
  try {
    process.kill(pid, name);
  } catch {
    // already gone
  }
};
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

(backend ? describe : describe.skip)('backend faults under a steady driver load (three nodes, one proxy)', () => {
  let entry: Cassandra3;
  let running: RunningProxy;
  let client: cassandra.Client;
  let load: SteadyLoad;
  const keyspace = `faults_${process.pid}_${Date.now() % 100_000}`;
  const figures: string[] = [];
  const label = (n: NodeEntry) => `${n.host}:${n.nativePort}`;

  const connectionsTo = async (node: string) => {
    const metric = await running.proxy.metrics.registry.getSingleMetric('muster_proxy_backend_connections')!.get();
    return metric.values.find((v) => v.labels.node === node)?.value ?? 0;
  };
  const sick = (node: string) => running.proxy.readiness().checks.sickNodes?.toString().includes(`${node}:`) ?? false;
  /** From now on, notes when `node` is first seen sick; the function returns that time once it is. */
  const whenSick = (node: string) => {
    let at: number | undefined;
    const timer = setInterval(() => {
      if (sick(node)) {
        at = Date.now();
        clearInterval(timer);
      }
    }, 20);
    timer.unref();
    return () => at;
  };
  /** Waits until the load has had `count` more successes (it keeps running through a fault). */
  const served = async (count: number) => {
    const target = load.ok + count;
    await until(`${count} more successful requests`, () => load.ok >= target, 60_000);
  };
  const report = (what: string, window: LoadWindow, extra: string) => {
    const line =
      `${what}: ${window.ok} ok, ${window.failed.length} failed, ${window.slow} waited >= ${REQUEST_TIMEOUT_MS / 1000} s, ` +
      `slowest ${(window.maxMs / 1000).toFixed(1)} s; ${extra}`;
    figures.push(line);
    console.log(
      `${line}${
        window.failed.length
          ? `\n  first failures: ${window.failed
              .slice(0, 3)
              .map((f) => f.message)
              .join(' | ')}`
          : ''
      }`,
    );
  };
  const seconds = (from: number, to: number) => `${((to - from) / 1000).toFixed(1)} s`;

  beforeAll(async () => {
    entry = backend!;
    running = await startProxy(entry);
    client = new cassandra.Client({
      contactPoints: [running.address],
      localDataCenter: entry.localDataCenter,
      // Several connections to the one proxy host: the proxy spreads them over the nodes.
      pooling: { coreConnectionsPerHost: { [cassandra.types.distance.local]: 6 } },
      queryOptions: { consistency: cassandra.types.consistencies.one, isIdempotent: true },
      // Short, constant: an exponential policy's next attempt can be minutes away when the test ends.
      policies: { reconnection: new cassandra.policies.reconnection.ConstantReconnectionPolicy(500) },
    });
    await client.connect();
    await client.execute(`CREATE KEYSPACE ${keyspace} WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}`);
    await client.execute(`CREATE TABLE ${keyspace}.kv (id int PRIMARY KEY, v text)`);
    const insert = `INSERT INTO ${keyspace}.kv (id, v) VALUES (?, ?)`;
    load = new SteadyLoad(client, (c, i) => c.execute(insert, [i % 10_000, 'v'], { prepare: true }), {
      rate: RATE,
      maxInFlight: 2000,
      slowMs: REQUEST_TIMEOUT_MS - 1000,
    });
    load.start();
    await served(RATE);
    load.mark();
  }, TIMEOUT);

  afterAll(async () => {
    // Whatever happened, the cluster is given back running.
    for (const node of entry?.nodes ?? []) signal(node.pid, 'SIGCONT');
    await load?.stop();
    for (const node of entry?.nodes ?? []) {
      if (alive(node.pid)) continue;
      entry = await restartNode(entry, node.id);
      putEntry('cassandra3', entry as never);
    }
    await client?.execute(`DROP KEYSPACE IF EXISTS ${keyspace}`).catch(() => undefined);
    await client?.shutdown();
    await running?.stop();
    console.log(`backend fault figures (load ${RATE} req/s):\n  ${figures.join('\n  ')}`);
  }, TIMEOUT);

  it(
    'a SIGSTOPped node is avoided within seconds, its client connections are closed, and it is used again after SIGCONT',
    async () => {
      const control = running.proxy.readiness().checks.controlNode;
      const victim = entry.nodes.find((n) => label(n) !== control)!;
      await until('client connections on the victim', async () => (await connectionsTo(label(victim))) > 0);
      const stopped = Date.now();
      signal(victim.pid, 'SIGSTOP');
      try {
        // Today's drivers cannot route around it (the proxy answers their heartbeats): only the proxy can.
        const sickSince = whenSick(label(victim));
        await until('no client connection on the stopped node', async () => (await connectionsTo(label(victim))) === 0, 60_000);
        const avoided = Date.now();
        const detected = await until('the proxy to find the stopped node sick', () => sickSince(), 10_000);
        await served(RATE * 3);
        const window = load.mark();
        signal(victim.pid, 'SIGCONT');
        const resumed = Date.now();
        await until('the node to be healthy again', () => !sick(label(victim)), 60_000);
        report(
          'SIGSTOP one node',
          window,
          `sick after ${seconds(stopped, detected)}, no connection on it after ${seconds(stopped, avoided)}, ` +
            `healthy ${seconds(resumed, Date.now())} after SIGCONT`,
        );
        // Nothing waited out the request timeout on the hung node.
        expect(window.slow).toBe(0);
        expect(window.failed.filter((f) => /did not answer|timed out/i.test(f.message))).toEqual([]);
      } finally {
        signal(victim.pid, 'SIGCONT');
      }
    },
    TIMEOUT,
  );

  it(
    'the control connection fails over when its node is SIGSTOPped, and readiness stays 200',
    async () => {
      const control = running.proxy.readiness().checks.controlNode as string;
      const victim = entry.nodes.find((n) => label(n) === control)!;
      expect(victim).toBeDefined();
      const stopped = Date.now();
      signal(victim.pid, 'SIGSTOP');
      try {
        const moved = await until(
          'the control connection on another node',
          () => {
            const now = running.proxy.readiness().checks.controlNode;
            return now !== control && now !== 'none' ? now : undefined;
          },
          60_000,
        );
        const failedOver = Date.now();
        expect((await readiness(running.proxy.httpPort)).status).toBe(200);
        await served(RATE * 2);
        const window = load.mark();
        signal(victim.pid, 'SIGCONT');
        const resumed = Date.now();
        await until('the node to be healthy again', () => !sick(label(victim)), 60_000);
        report(
          'SIGSTOP the control node',
          window,
          `control connection moved to ${String(moved)} after ${seconds(stopped, failedOver)}, healthy ${seconds(resumed, Date.now())} after SIGCONT`,
        );
        expect(window.slow).toBe(0);
      } finally {
        signal(victim.pid, 'SIGCONT');
      }
    },
    TIMEOUT,
  );

  it(
    'readiness is 503 with a reason while no node answers, and 200 again when they do',
    async () => {
      const stopped = Date.now();
      for (const node of entry.nodes) signal(node.pid, 'SIGSTOP');
      try {
        const body = await until(
          'readiness 503',
          async () => {
            const r = await readiness(running.proxy.httpPort);
            if (r.status !== 503) return undefined;
            const json = r.body;
            // The control connection may be the first to go ("no control connection"): wait for the nodes.
            return /no backend node answers/.test(String(json.checks.reason)) ? json : undefined;
          },
          60_000,
        );
        const unready = Date.now();
        expect(body.checks.reason).toMatch(/no backend node answers/);
        for (const node of entry.nodes) signal(node.pid, 'SIGCONT');
        const resumed = Date.now();
        await until('readiness 200', async () => (await readiness(running.proxy.httpPort)).status === 200, 60_000);
        const ready = Date.now();
        await served(RATE);
        report('SIGSTOP every node', load.mark(), `503 after ${seconds(stopped, unready)}, 200 ${seconds(resumed, ready)} after SIGCONT`);
      } finally {
        for (const node of entry.nodes) signal(node.pid, 'SIGCONT');
      }
    },
    TIMEOUT,
  );

  it(
    'a SIGKILLed node is avoided at once and used again after its restart',
    async () => {
      const control = running.proxy.readiness().checks.controlNode;
      const victim = entry.nodes.find((n) => label(n) !== control)!;
      await until('client connections on the victim', async () => (await connectionsTo(label(victim))) > 0, 60_000).catch(() => undefined);
      const killed = Date.now();
      signal(victim.pid, 'SIGKILL');
      await until('the proxy to find the killed node sick', () => sick(label(victim)), 60_000);
      const detected = Date.now();
      await until('no client connection on the killed node', async () => (await connectionsTo(label(victim))) === 0, 60_000);
      await served(RATE * 3);
      const window = load.mark();
      const restarting = Date.now();
      entry = await restartNode(entry, victim.id);
      putEntry('cassandra3', entry as never);
      const restarted = Date.now();
      await until('the restarted node to be healthy', () => !sick(label(victim)), 60_000);
      const healthy = Date.now();
      // New driver connections reach it again.
      const fresh = new cassandra.Client({
        contactPoints: [running.address],
        localDataCenter: entry.localDataCenter,
        pooling: { coreConnectionsPerHost: { [cassandra.types.distance.local]: 6 } },
        policies: { reconnection: new cassandra.policies.reconnection.ConstantReconnectionPolicy(500) },
      });
      try {
        await fresh.connect();
        await until('a client connection on the restarted node', async () => (await connectionsTo(label(victim))) > 0, 60_000);
        // A node killed within the commit log's sync period may have lost the newest schema and
        // pulls it from its peers after the restart: until then it says "keyspace does not exist".
        await until(
          'the restarted cluster to serve the keyspace',
          () =>
            fresh.execute(`SELECT id FROM ${keyspace}.kv LIMIT 1`).then(
              () => true,
              () => false,
            ),
          60_000,
        );
      } finally {
        await fresh.shutdown();
      }
      report(
        'SIGKILL one node',
        window,
        `sick after ${seconds(killed, detected)}; restart took ${seconds(restarting, restarted)}, healthy ${seconds(restarted, healthy)} after it`,
      );
      expect(window.slow).toBe(0);
    },
    TIMEOUT,
  );
});
