// npm start from nothing, as a newcomer runs it on a fresh machine (issue 13): no Cassandra runs in
// its testenv (a private MUSTER_TESTENV_DIR, so the shared servers are neither used nor touched),
// so `npm start` starts one of its own from the warm cache, then three proxies; a real driver sees
// three hosts; Ctrl-C (SIGINT to the whole process group, as a terminal sends it) stops the proxies
// and the Cassandra it started, and frees every port. Needs no shared server, only the cached
// Cassandra jars and Java 17 (`npm run testenv -- build cassandra`, which CI runs first): without
// them it is skipped locally, listed in the skip summary, and fails under CI=true.
import { afterAll, describe, expect, it } from '@jest/globals';
import cassandra from 'cassandra-driver';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { testTool } from '../../testenv/optional-tools.mjs';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const testenvCli = join(repo, 'scripts/testenv/cli.mjs');
const hosts = ['127.0.0.1', '127.0.0.2', '127.0.0.3'];
// A cold Cassandra start on 2 busy cores is 10–60 s, npm start's `tsc -b` a few more.
const TIMEOUT = 420_000;

const canBind = (port: number, host: string) =>
  new Promise<boolean>((done) => {
    const server = createServer();
    server.once('error', () => done(false));
    server.listen(port, host, () => server.close(() => done(true)));
  });
const freePort = () =>
  new Promise<number>((done) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => done(port));
    });
  });
/** Alive and not a zombie (a reparented child nobody has reaped yet is gone for every purpose here). */
const running = (pid: number) => {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const stat = existsSync(`/proc/${pid}/stat`) ? readFileSync(`/proc/${pid}/stat`, 'utf8') : '';
  return !/^\d+ \(.*\) Z/.test(stat);
};
const until = async (what: string, check: () => boolean | Promise<boolean>, timeoutMs: number, output: () => string) => {
  for (const deadline = Date.now() + timeoutMs; !(await check());) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms; npm start printed:\n${output()}`);
    await new Promise((r) => setTimeout(r, 250));
  }
};

interface CassandraEntry {
  pids: number[];
  host: string;
  nativePort: number;
  version: string;
  localDataCenter: string;
}

(testTool('cassandra-cache') ? describe : describe.skip)('npm start with no Cassandra running', () => {
  const dir = mkdtempSync(join(tmpdir(), 'muster-start-own-'));
  const env = { ...process.env, MUSTER_TESTENV_DIR: dir, MUSTER_CASSANDRA_HEAP: '512M', NODE_OPTIONS: '' };
  const cassandraEntry = (): CassandraEntry | undefined => {
    const file = join(dir, 'state.json');
    return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as { cassandra?: CassandraEntry }).cassandra : undefined;
  };
  let child: ChildProcess | undefined;

  afterAll(() => {
    // Only after a failure is anything left: the process group of npm start, and its Cassandra.
    if (child?.pid && child.exitCode === null && child.signalCode === null) {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }
    if (cassandraEntry()) execFileSync(process.execPath, [testenvCli, 'down', 'cassandra'], { env, stdio: 'inherit' });
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it(
    'starts its own Cassandra and three proxies a driver sees as three hosts, and Ctrl-C stops all of them and frees the ports',
    async () => {
      const started = Date.now();
      const port = await freePort();
      const httpPort = await freePort();
      let output = '';
      // As a user types it, in its own process group so that SIGINT reaches the group as Ctrl-C does.
      child = spawn('npm', ['start', '--', '--port', String(port), '--http-port', String(httpPort)], {
        cwd: repo,
        env,
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
      child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
      const exited = new Promise<void>((done) => child!.once('exit', () => done()));
      const printed = () => output;

      await until(
        'npm start to report it is running',
        () => {
          if (child!.exitCode !== null) throw new Error(`npm start exited early:\n${output}`);
          return /\[muster start\] running \(pids/.test(output);
        },
        TIMEOUT - 60_000,
        printed,
      );
      expect(output).toContain('starting the testenv Cassandra');
      const backend = cassandraEntry();
      expect(backend).toBeDefined();
      expect(backend!.pids.every(running)).toBe(true);
      const proxyPids = /running \(pids ([\d, ]+)\)/.exec(output)![1]!.split(', ').map(Number);
      expect(proxyPids).toHaveLength(3);
      console.log(`npm start from nothing: running after ${((Date.now() - started) / 1000).toFixed(1)} s`);

      const client = new cassandra.Client({
        contactPoints: [`127.0.0.3:${port}`],
        localDataCenter: backend!.localDataCenter,
        protocolOptions: { port },
      });
      try {
        await client.connect();
        const up = () =>
          client.hosts
            .values()
            .filter((h) => h.isUp())
            .map((h) => h.address)
            .sort();
        await until('the driver to see three hosts up', () => up().length === 3, 60_000, printed);
        expect(up()).toEqual(hosts.map((h) => `${h}:${port}`));
        const { rows } = await client.execute('SELECT release_version FROM system.local');
        expect(rows[0]?.['release_version']).toBe(backend!.version);
      } finally {
        await client.shutdown();
      }

      const stopping = Date.now();
      process.kill(-child.pid!, 'SIGINT');
      await exited;
      console.log(`npm start from nothing: stopped ${((Date.now() - stopping) / 1000).toFixed(1)} s after Ctrl-C`);
      expect(output).toContain('stopping the Cassandra it started');
      expect(output).toContain('[muster start] stopped');
      expect([...proxyPids, ...backend!.pids].filter(running)).toEqual([]);
      expect(cassandraEntry()).toBeUndefined();
      const taken: string[] = [];
      for (const host of hosts) {
        if (!(await canBind(port, host))) taken.push(`${host}:${port}`);
        if (!(await canBind(httpPort, host))) taken.push(`${host}:${httpPort}`);
      }
      if (!(await canBind(backend!.nativePort, backend!.host))) taken.push(`${backend!.host}:${backend!.nativePort}`);
      expect(taken).toEqual([]);
    },
    TIMEOUT,
  );
});
