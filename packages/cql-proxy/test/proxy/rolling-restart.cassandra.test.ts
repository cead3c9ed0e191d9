// Three proxy PROCESSES (the CLI) on static membership with no heartbeat section, in front of the
// testenv Cassandra. They learn each other's state by probing (proxy.peerProbe), so a registered
// client hears DOWN when a peer is killed and UP when it returns, DOWN then REMOVED_NODE when one
// drains, and NEW_NODE when it is back. Then a rolling restart (SIGTERM, start again, wait until
// the others show it UP, next) under a steady load from cassandra-driver and the Python driver,
// both with their defaults (non-idempotent statements, default retry policy): neither loses a
// request. cassandra-driver sends requests on its control connection too: the draining proxy shows
// itself in a data center of its own and tells its registered clients REMOVED_NODE about itself, so
// the driver moves that connection away and closes it once answered (README, Drain; leaving.ts).
// gocql (when Go is installed) runs twice: with its defaults, measured and printed (no server can
// guarantee it 0: README, Drain), and with idempotent statements and a retry policy, the remedy the
// README gives, which must lose nothing.
// MUSTER_DRAIN_RATE sets the rate, MUSTER_DRAIN_GOCQL=off skips gocql, MUSTER_DRAIN_DEBUG=1 keeps
// cassandra-driver's log beside the proxies' logs in the test's temporary folder.
// Finally a proxy removed from the members file stops being ready and refuses new clients.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import cassandra from 'cassandra-driver';
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdtempSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { pythonDriver } from '../../../../scripts/testenv/drivers.mjs';
import { gocqlSteadyLoad } from '../../../../scripts/testenv/gocql.mjs';
import { testTool } from '../../../../scripts/testenv/optional-tools.mjs';
import { testServer } from '../../../../scripts/testenv/state.mjs';
import { decodeEvent } from '../../src/protocol/event.js';
import { Opcode } from '../../src/protocol/frame.js';
import { encodeStartup } from '../../src/protocol/requests.js';
import { freePort, until, type CassandraEntry } from './harness.js';
import { RawClient } from './raw-client.js';

const backend = testServer<CassandraEntry>('cassandra');
// Without one of these the drain test runs without that driver (listed in the skip summary).
const python = testTool('python-driver');
const go = testTool('gocql', { optOut: 'MUSTER_DRAIN_GOCQL' });
const TIMEOUT = 300_000;
const bin = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));
const loadScript = fileURLToPath(new URL('../drivers/python/steady_load.py', import.meta.url));
/** Requests per second from each driver. */
const RATE = Number(process.env.MUSTER_DRAIN_RATE ?? 200);

/**
 * Cassandra's own answer that a write timed out (the shared testenv node is busy): forwarded as the
 * backend gave it, not the proxy's doing, so counted apart from the drain's verdict.
 */
const backendTimeout = (error: string) => /WriteTimeout|ReadTimeout|Server timeout during (write|read) query/.test(error);

/** What a failed test leaves running is stopped in afterAll. */
const cleanups: (() => unknown)[] = [];

interface LoadReport {
  ok: number;
  failed: number;
  unanswered?: number;
  /** Failures by error class (Python, gocql). */
  kinds?: Record<string, number>;
  /** The first failure of each kind, with its host and times (gocql). */
  examples?: Record<string, string>;
  errors: string[];
}

/** A driver's load in its own process: JSON lines out, the load stops when its stdin closes. */
function subprocessLoad(command: string, args: string[]) {
  const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, PYTHONWARNINGS: 'ignore' } });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  const lines: Record<string, unknown>[] = [];
  createInterface({ input: child.stdout }).on('line', (line) => {
    try {
      lines.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      stderr += `\n(stdout) ${line}`;
    }
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  cleanups.push(() => child.kill('SIGKILL'));
  return {
    lines,
    /** The last set of hosts it reported having open pools to. */
    hosts: () => (lines.filter((l) => 'hosts' in l).at(-1)?.['hosts'] as string[] | undefined) ?? [],
    started: () =>
      until(`${command} to start its load`, () => lines.some((l) => 'started' in l), 120_000).catch(() => {
        throw new Error(`${command} did not start; stderr:\n${stderr}`);
      }),
    async finish(): Promise<LoadReport> {
      child.stdin.end();
      await until(`${command} to report`, () => lines.some((l) => 'ok' in l), 60_000).catch(() => {
        throw new Error(`${command} did not report; stderr:\n${stderr}`);
      });
      await exited;
      return lines.find((l) => 'ok' in l) as unknown as LoadReport;
    },
  };
}

interface Member {
  id: string;
  address: string;
  port: number;
}
interface TopologyMember {
  id: string;
  up: boolean;
}

(backend ? describe : describe.skip)('three proxy processes on static membership: liveness, drain, rolling restart', () => {
  const dir = mkdtempSync(join(tmpdir(), 'muster-drain-'));
  const membersFile = join(dir, 'members.yaml');
  const ids = ['proxy-a', 'proxy-b', 'proxy-c'];
  const hostOf = (id: string) => `127.0.0.${ids.indexOf(id) + 1}`;
  let port: number;
  const http = new Map<string, number>();
  const running = new Map<string, ChildProcess>();
  const address = (id: string) => `${hostOf(id)}:${port}`;

  const writeMembers = (present: string[]) => {
    const members: Member[] = ids.filter((id) => present.includes(id)).map((id) => ({ id, address: hostOf(id), port }));
    writeFileSync(`${membersFile}.tmp`, `members: ${JSON.stringify(members)}\n`);
    renameSync(`${membersFile}.tmp`, membersFile);
  };

  const get = async <T>(id: string, path: string): Promise<{ status: number; body: T } | undefined> => {
    try {
      const response = await fetch(`http://127.0.0.1:${http.get(id)}${path}`);
      return { status: response.status, body: (await response.json()) as T };
    } catch {
      return undefined;
    }
  };
  const topology = async (id: string) => (await get<{ members: TopologyMember[] }>(id, '/topology'))?.body.members ?? [];
  /** Polls an async condition (until() polls sync ones). */
  const eventually = async (what: string, check: () => Promise<boolean>, ms = 60_000) => {
    const deadline = Date.now() + ms;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`${what} did not happen within ${ms} ms`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  /** Every other running proxy shows `id` up (or down). */
  const seenBy = (id: string, up: boolean) =>
    eventually(`the others to see ${id} ${up ? 'UP' : 'DOWN'}`, async () => {
      for (const other of ids.filter((o) => o !== id && running.has(o))) {
        const member = (await topology(other)).find((m) => m.id === id);
        if (member?.up !== up) return false;
      }
      return true;
    });

  /** Starts `id`'s process; one that exits before it is ready (it could not reach the busy shared Cassandra) is started again, twice at most. */
  const start = async (id: string, attempts = 3): Promise<void> => {
    const config = join(dir, `${id}.yaml`);
    // The shared testenv Cassandra answers slowly when the machine is busy: judged sick after the
    // default 2 s, it would have every proxy close its clients' connections, which is not the drain.
    writeFileSync(
      config,
      `discovery: { adapter: static, options: { service: muster-cql-proxy, file: ${membersFile} } }
proxy:
  instanceId: ${id}
  listen: { host: ${hostOf(id)}, port: ${port} }
  http: { host: 127.0.0.1, port: ${http.get(id)} }
  backend: { contactPoints: [${backend!.contactPoints.join(', ')}], probeTimeout: 10s }
  events: { debounce: 200ms }
  log: { level: info }
`,
    );
    const log = createWriteStream(join(dir, `${id}.log`), { flags: 'a' });
    const child = spawn(process.execPath, [bin, '--config', config], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NODE_OPTIONS: '' },
    });
    child.stdout.pipe(log);
    child.stderr.pipe(log);
    running.set(id, child);
    const gone = () => child.exitCode !== null || child.signalCode !== null;
    await eventually(`${id} to be ready`, async () => gone() || (await get(id, '/health/readiness'))?.status === 200);
    if (!gone()) return;
    running.delete(id);
    const why = `${id} exited (${child.exitCode ?? child.signalCode}) before it was ready; its log: ${join(dir, `${id}.log`)}`;
    if (attempts <= 1) throw new Error(why);
    console.warn(`${why}; starting it again`);
    await start(id, attempts - 1);
  };

  /** SIGTERM (drain) or SIGKILL, and wait for the process to be gone. */
  const stop = async (id: string, signal: 'SIGTERM' | 'SIGKILL') => {
    const child = running.get(id)!;
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill(signal);
    const code = await exited;
    running.delete(id);
    if (signal === 'SIGTERM') expect(code).toBe(0);
  };

  /** The next event on `watcher` about `id`, skipping events about others. */
  const nextEventAbout = async (watcher: RawClient, id: string) => {
    for (;;) {
      const frame = await watcher.next(-1, 30_000);
      expect(frame?.opcode).toBe(Opcode.EVENT);
      const event = decodeEvent(frame!.body);
      if ('address' in event && event.address.address === hostOf(id)) return event;
    }
  };

  beforeAll(async () => {
    port = await freePort(...ids.map(hostOf));
    for (const id of ids) http.set(id, await freePort());
    writeMembers(ids);
    await Promise.all(ids.map((id) => start(id)));
    for (const id of ids) await seenBy(id, true);
  }, TIMEOUT);

  afterAll(async () => {
    for (const child of running.values()) child.kill('SIGKILL');
    for (const cleanup of cleanups) await cleanup();
  });

  it(
    'a killed peer is DOWN for a registered client within seconds, UP when started again; a drained one DOWN, then REMOVED_NODE, then NEW_NODE',
    async () => {
      const watcher = await RawClient.registered(address('proxy-a'), ['STATUS_CHANGE', 'TOPOLOGY_CHANGE']);
      try {
        let from = Date.now();
        await stop('proxy-c', 'SIGKILL');
        expect(await nextEventAbout(watcher, 'proxy-c')).toMatchObject({ type: 'STATUS_CHANGE', change: 'DOWN' });
        console.log(`SIGKILL → DOWN on a registered client: ${Date.now() - from} ms (probe every 1 s, debounce 200 ms)`);
        from = Date.now();
        await start('proxy-c');
        expect(await nextEventAbout(watcher, 'proxy-c')).toMatchObject({ type: 'STATUS_CHANGE', change: 'UP' });
        console.log(`started again (ready) → UP: ${Date.now() - from} ms after the start command`);

        // A client of proxy-c that never moves away (no driver logic): the drain waits out its grace,
        // then half-closes it (FIN, so 'end' before 'close'; a reset would be an 'error').
        const stayer = await RawClient.open(address('proxy-c'));
        stayer.send(4, 1, Opcode.STARTUP, encodeStartup({ options: new Map([['CQL_VERSION', '3.0.0']]) }));
        expect((await stayer.next(1))?.opcode).toBe(Opcode.READY);
        const ending = new Promise<string>((resolve) => {
          stayer.socket.once('end', () => resolve('end'));
          stayer.socket.once('error', (error) => resolve(`error ${error.message}`));
        });
        from = Date.now();
        await stop('proxy-c', 'SIGTERM');
        expect(await ending).toBe('end');
        expect(await nextEventAbout(watcher, 'proxy-c')).toMatchObject({ type: 'STATUS_CHANGE', change: 'DOWN' });
        expect(await nextEventAbout(watcher, 'proxy-c')).toMatchObject({ type: 'TOPOLOGY_CHANGE', change: 'REMOVED_NODE' });
        stayer.close();
        await start('proxy-c');
        expect(await nextEventAbout(watcher, 'proxy-c')).toMatchObject({ type: 'TOPOLOGY_CHANGE', change: 'NEW_NODE' });
        console.log(`SIGTERM → DOWN, REMOVED_NODE; started again → NEW_NODE: ${Date.now() - from} ms in all`);
      } finally {
        watcher.close();
      }
    },
    TIMEOUT,
  );

  (python ? it : it.skip)(
    `rolling restart of all three under ${RATE} req/s from each of cassandra-driver and the Python driver, defaults: 0 failed for either`,
    async () => {
      const setup = new cassandra.Client({
        contactPoints: [address('proxy-a')],
        localDataCenter: backend!.localDataCenter,
        protocolOptions: { port },
      });
      cleanups.push(() => setup.shutdown());
      // The busy shared Cassandra may not answer a first connect in time (the driver allows connect() again).
      for (let attempt = 1; ; attempt++) {
        try {
          await setup.connect();
          break;
        } catch (error) {
          if (attempt === 3) throw error;
          console.warn(`setup connect failed (${String(error)}); trying again`);
        }
      }
      await setup.execute(
        "CREATE KEYSPACE IF NOT EXISTS muster_drain WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
      );
      await setup.execute('CREATE TABLE IF NOT EXISTS muster_drain.kv (k int PRIMARY KEY, v int)');
      await setup.shutdown();

      // cassandra-driver: defaults but for where it dials (protocolOptions.port: the proxies' port).
      const client = new cassandra.Client({
        contactPoints: [address('proxy-a')],
        localDataCenter: backend!.localDataCenter,
        protocolOptions: { port },
      });
      const driverLog: string[] = [];
      /** When the driver moved its control connection off a draining host, by its own log. */
      const controlHostLost: number[] = [];
      client.on('log', (level: string, source: string, message: string) => {
        if (/used by the ControlConnection DOWN/.test(message)) controlHostLost.push(Date.now());
        if (process.env.MUSTER_DRAIN_DEBUG && level !== 'verbose') driverLog.push(`${Date.now()} ${level} ${source} ${message}`);
      });
      await client.connect();
      cleanups.push(() => client.shutdown());
      if (process.env.MUSTER_DRAIN_DEBUG) cleanups.push(() => writeFileSync(join(dir, 'node-driver.log'), driverLog.join('\n')));
      const node = { ok: 0, failed: 0, backendTimeouts: 0, errors: [] as string[], failedAt: [] as number[] };
      let sending = true;
      cleanups.push(() => (sending = false));
      const inFlight = new Set<Promise<void>>();
      const load = (async () => {
        let i = 0;
        const started = Date.now();
        while (sending) {
          i++;
          const request = client.execute('INSERT INTO muster_drain.kv (k, v) VALUES (?, ?)', [i % 1000, i], { prepare: true }).then(
            () => void node.ok++,
            (error: unknown) => {
              if (backendTimeout(String(error))) {
                node.backendTimeouts++;
                return;
              }
              node.failed++;
              node.failedAt.push(Date.now());
              if (node.errors.length < 20) node.errors.push(`${Date.now()} ${String(error)}`);
            },
          );
          inFlight.add(request);
          void request.finally(() => inFlight.delete(request));
          const due = started + (i * 1000) / RATE;
          await new Promise((r) => setTimeout(r, Math.max(0, due - Date.now())));
        }
      })();

      const gocqlBin = go ? await gocqlSteadyLoad() : undefined;
      // One after another: on a busy machine, drivers connecting all at once time out (the Python
      // driver gives its control connection 5 s).
      const py = subprocessLoad((await pythonDriver()).python, [loadScript, address('proxy-a'), String(RATE)]);
      await py.started();
      const gocql = gocqlBin ? subprocessLoad(gocqlBin, [address('proxy-a'), String(RATE)]) : undefined;
      await gocql?.started();
      // The remedy needs no full rate to show: a quarter keeps the busy machine's load down.
      const gocqlRetry = gocqlBin ? subprocessLoad(gocqlBin, [address('proxy-b'), String(RATE / 4), 'retry']) : undefined;
      await gocqlRetry?.started();
      const pyHosts = py.hosts;
      const nodeHosts = () =>
        client
          .getState()
          .getConnectedHosts()
          .map((h) => h.address);
      const everyone = ids.map(address).sort();
      const allConnected = (what: string) =>
        until(
          what,
          () =>
            JSON.stringify([...pyHosts()].sort()) === JSON.stringify(everyone) &&
            JSON.stringify([...nodeHosts()].sort()) === JSON.stringify(everyone),
          60_000,
        );
      await allConnected('both drivers to have pools to all three proxies');

      for (const id of ids) {
        const from = Date.now();
        await stop(id, 'SIGTERM');
        const drained = Date.now();
        await start(id);
        await seenBy(id, true);
        await allConnected(`both drivers to use ${id} again`);
        console.log(`${id}: drained in ${drained - from} ms, back in both drivers' pools ${Date.now() - drained} ms later`);
      }

      sending = false;
      await load;
      await Promise.all([...inFlight]);
      const [pyReport, goReport, goRetryReport] = await Promise.all([py.finish(), gocql?.finish(), gocqlRetry?.finish()]);
      await client.shutdown();
      const drainLines = ids.flatMap((id) =>
        readFileSync(join(dir, `${id}.log`), 'utf8')
          .split('\n')
          .filter((l) => l.includes('"msg":"drained"')),
      );
      console.log(
        `rolling restart: cassandra-driver ${node.ok} ok / ${node.failed} failed ${JSON.stringify(node.errors)}; ` +
          `Python driver ${pyReport.ok} ok / ${pyReport.failed} failed / ${pyReport.unanswered} unanswered ${JSON.stringify(pyReport.errors)}; ` +
          (goReport && goRetryReport
            ? `gocql (defaults) ${goReport.ok} ok / ${goReport.failed} failed ${JSON.stringify(goReport.kinds)} ${JSON.stringify(goReport.examples)}; ` +
              `gocql (idempotent, retry policy) ${goRetryReport.ok} ok / ${goRetryReport.failed} failed ${JSON.stringify(goRetryReport.errors)}\n`
            : 'gocql not run (no go)\n') +
          drainLines.join('\n'),
      );
      expect(node.ok).toBeGreaterThan(0);
      expect(pyReport.ok).toBeGreaterThan(0);
      const pyKinds = Object.entries(pyReport.kinds ?? {});
      const pyTimeouts = pyKinds.filter(([kind]) => backendTimeout(kind)).reduce((n, [, count]) => n + count, 0);
      console.log(
        `backend timeouts (the busy testenv Cassandra's own answers, not counted): cassandra-driver ${node.backendTimeouts}, Python ${pyTimeouts}`,
      );
      expect(Object.fromEntries(pyKinds.filter(([kind]) => !backendTimeout(kind)))).toEqual({});
      expect(pyReport.unanswered ?? 0).toBe(0);
      // cassandra-driver sends requests on its control connection too; the draining proxy makes it
      // move that connection itself (a data center of its own, then REMOVED_NODE: leaving.ts), so
      // nothing is lost, not even there.
      expect({ failed: node.failed, errors: node.errors }).toEqual({ failed: 0, errors: [] });
      console.log(`cassandra-driver moved its control connection off a draining host ${controlHostLost.length} times`);
      if (goReport) expect(goReport.ok).toBeGreaterThan(0);
      // The remedy for gocql behind proxies: idempotent statements and a retry policy lose nothing.
      if (goRetryReport) expect({ failed: goRetryReport.failed, errors: goRetryReport.errors }).toEqual({ failed: 0, errors: [] });
    },
    TIMEOUT,
  );

  it(
    'a proxy removed from the members file stops being ready and refuses new clients; put back, it serves again',
    async () => {
      writeMembers(['proxy-a', 'proxy-b']);
      await eventually('proxy-c to report not ready', async () => (await get('proxy-c', '/health/readiness'))?.status === 503);
      expect((await get<{ checks: Record<string, unknown> }>('proxy-c', '/health/readiness'))?.body.checks).toMatchObject({
        listed: false,
      });
      await expect(RawClient.registered(address('proxy-c'), ['STATUS_CHANGE'])).rejects.toThrow(/not answered READY/);
      writeMembers(ids);
      await eventually('proxy-c to be ready again', async () => (await get('proxy-c', '/health/readiness'))?.status === 200);
      (await RawClient.registered(address('proxy-c'), ['STATUS_CHANGE'])).close();
    },
    TIMEOUT,
  );
});
