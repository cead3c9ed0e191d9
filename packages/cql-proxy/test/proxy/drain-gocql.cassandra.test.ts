// The drain's way of moving gocql (departure.ts), pinned faster than the rolling restart: two
// in-process proxies, gocql with its defaults (no retry policy, statements not idempotent) whose
// only contact point, and so its control connection, is on the one that drains, under a light
// steady load. gocql never leaves a host by itself without failing what is in flight there, and
// while its control connection is on the draining proxy it hears no DOWN at all: the draining proxy
// must close gocql's connections itself, each once nothing on it is unanswered, long before its
// grace ends. (Before: gocql stayed for the whole grace, here 10 minutes, and this test timed out.)
// Its losses are printed, not judged: what is left is gocql's own instant between reading the FIN
// and dropping the connection from its pool, which a busy machine stretches (README, Drain).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import cassandra from 'cassandra-driver';
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { gocqlSteadyLoad } from '../../../../scripts/testenv/gocql.mjs';
import { testTool } from '../../../../scripts/testenv/optional-tools.mjs';
import { testServer } from '../../../../scripts/testenv/state.mjs';
import { converged, freePort, startProxy, until, type CassandraEntry, type RunningProxy } from './harness.js';

const backend = testServer<CassandraEntry>('cassandra');
const go = backend && testTool('gocql');
const TIMEOUT = 180_000;

(backend && go ? describe : describe.skip)('draining the proxy that holds gocql’s control connection', () => {
  const scope = `drain-gocql-${Math.random()}`;
  let port: number;
  const proxies: RunningProxy[] = [];
  let load: ChildProcess | undefined;

  beforeAll(async () => {
    const setup = new cassandra.Client({ contactPoints: backend!.contactPoints, localDataCenter: backend!.localDataCenter });
    await setup.connect();
    await setup.execute(
      "CREATE KEYSPACE IF NOT EXISTS muster_drain WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
    );
    await setup.execute('CREATE TABLE IF NOT EXISTS muster_drain.kv (k int PRIMARY KEY, v int)');
    await setup.shutdown();
    port = await freePort();
    const members = [
      { id: 'proxy-a', address: '127.0.0.1', port },
      { id: 'proxy-b', address: '127.0.0.2', port },
    ];
    for (const [i, member] of members.entries()) {
      proxies.push(
        await startProxy(backend!, {
          id: member.id,
          host: `127.0.0.${i + 1}`,
          port,
          members,
          scope,
          proxy: {
            events: { debounce: '100ms' },
            // A busy shared machine answers slowly; a backend judged sick would close connections too.
            backend: { contactPoints: backend!.contactPoints, probeTimeout: '10s' },
            // Longer than the test: gocql's connections must be closed by the drain, not by the grace's end.
            shutdown: { grace: '10m', drainTimeout: '10m' },
          },
        }),
      );
    }
    await converged(proxies, 2);
  }, TIMEOUT);

  afterAll(async () => {
    load?.kill('SIGKILL');
    for (const p of proxies) await p.stop().catch(() => undefined);
  }, TIMEOUT);

  it(
    "the draining proxy closes gocql's connections itself at idle moments, long before its grace ends",
    async () => {
      const child = spawn(await gocqlSteadyLoad(), [`127.0.0.1:${port}`, '50'], { stdio: ['pipe', 'pipe', 'pipe'] });
      load = child;
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
      const lines: Record<string, unknown>[] = [];
      createInterface({ input: child.stdout }).on('line', (line) => lines.push(JSON.parse(line) as Record<string, unknown>));
      const clients = async (p: RunningProxy) => (await p.proxy.metrics.clientConnections.get()).values[0]?.value ?? 0;
      // gocql's pools (2 connections per host) to both proxies, and its control connection on proxy-a.
      await until(
        'gocql connected to both proxies',
        async () => (await clients(proxies[0]!)) >= 3 && (await clients(proxies[1]!)) >= 2,
        60_000,
      ).catch(() => {
        throw new Error(`gocql did not connect; stderr:\n${stderr}`);
      });
      await until('gocql to send its load', () => lines.some((l) => 'started' in l));
      const forwarded = async (p: RunningProxy) =>
        Number(/request_duration_seconds_count\{kind="forwarded"\} (\d+)/.exec(await p.proxy.metrics.registry.metrics())?.[1] ?? 0);
      await until('gocql requests answered by the proxy that drains', async () => (await forwarded(proxies[0]!)) > 100, 60_000);

      const stopped = proxies[0]!.stop();
      await until('gocql to be off the draining proxy', async () => (await clients(proxies[0]!)) === 0, 60_000);
      await stopped;
      child.stdin.end();
      const report = (await until('gocql to report', () => lines.find((l) => 'ok' in l), 60_000)) as {
        ok: number;
        failed: number;
        kinds: Record<string, number>;
        errors: string[];
      };
      console.log(
        `gocql during the drain of its control connection's host: ${report.ok} ok, ${report.failed} failed ${JSON.stringify(report.kinds)} ${JSON.stringify(report.errors.slice(0, 3))}`,
      );
      expect(report.ok).toBeGreaterThan(0);
    },
    TIMEOUT,
  );
});
