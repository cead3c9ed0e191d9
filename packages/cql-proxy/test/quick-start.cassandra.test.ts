// The README's Quick start, run as written from inside the repository (issue 13): its shell blocks
// (the in-repository export of the testenv Cassandra's contact points, the proxy.yaml heredoc,
// --check, the npx line) in bash from a folder inside the repository, then a driver through the
// proxy. Left out: `npm install` (the packages are workspaces, as the README says) and `testenv up`
// (testServer() finds the server up). Only the ports are moved with MUSTER_PROXY_LISTEN_PORT /
// _HTTP_PORT: 9042 and 9100 may be taken on a shared machine.
import { afterAll, describe, expect, it } from '@jest/globals';
import cassandra from 'cassandra-driver';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { testServer } from '../../../scripts/testenv/state.mjs';
import { freePort, until, type CassandraEntry } from './proxy/harness.js';

const backend = testServer<CassandraEntry>('cassandra');
const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const TIMEOUT = 120_000;

const canBind = (port: number) =>
  new Promise<boolean>((done) => {
    const server = createServer();
    server.once('error', () => done(false));
    server.listen(port, '127.0.0.1', () => server.close(() => done(true)));
  });

/** The ```sh blocks of the README's Quick start, in order, as lines. */
function quickStartBlocks(): string[][] {
  const readme = readFileSync(join(repo, 'packages/cql-proxy/README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Quick start'), readme.indexOf('\n## ', readme.indexOf('## Quick start') + 1));
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!.trimEnd().split('\n'));
}

(backend ? describe : describe.skip)('the Quick start, as written, in the repository', () => {
  let proxy: ChildProcess | undefined;
  // Inside the repository (npm and npx find its root and the linked bin), in a git-ignored folder.
  mkdirSync(join(repo, '.testenv'), { recursive: true });
  const dir = mkdtempSync(join(repo, '.testenv', 'quick-start-'));
  afterAll(() => {
    try {
      if (proxy?.pid) process.kill(-proxy.pid, 'SIGKILL'); // only left after a failure
    } catch {
      /* gone */
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it(
    'exports the testenv contact points, --check prints them, and the proxy serves a driver',
    async () => {
      const [inRepo, asPackage] = quickStartBlocks();
      expect(inRepo).toBeDefined();
      expect(asPackage).toBeDefined();
      const exportLine = inRepo!.filter((line) => line.startsWith('export '));
      expect(exportLine).toHaveLength(1);
      const steps = asPackage!.filter((line) => !line.startsWith('npm install'));
      const run = steps.pop()!;
      expect(run).toMatch(/^npx muster-cql-proxy --config proxy\.yaml$/);
      const port = await freePort();
      const httpPort = await freePort();
      const env = {
        ...process.env,
        NODE_OPTIONS: '',
        MUSTER_PROXY_LISTEN_PORT: String(port),
        MUSTER_PROXY_HTTP_PORT: String(httpPort),
      };

      const checked = spawnSync('bash', ['-e', '-c', [...exportLine, ...steps].join('\n')], { cwd: dir, env, encoding: 'utf8' });
      expect(checked.stderr).not.toMatch(/error/i);
      expect(checked.status).toBe(0);
      const effective = JSON.parse(checked.stdout) as { proxy: { backend: { contactPoints: string[] }; instanceId: string } };
      expect(effective.proxy.backend.contactPoints).toEqual(backend!.contactPoints);
      expect(effective.proxy.instanceId).toBe('proxy-0');

      let output = '';
      proxy = spawn('bash', ['-e', '-c', [...exportLine, `exec ${run}`].join('\n')], {
        cwd: dir,
        env,
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      proxy.stdout!.on('data', (d: Buffer) => (output += d.toString()));
      proxy.stderr!.on('data', (d: Buffer) => (output += d.toString()));
      await until(
        `the proxy to be ready on :${httpPort} (output so far: ${output.slice(-2000)})`,
        async () => {
          if (proxy!.exitCode !== null) throw new Error(`the proxy exited (${proxy!.exitCode}):\n${output}`);
          return fetch(`http://127.0.0.1:${httpPort}/health/readiness`).then(
            (r) => r.ok,
            () => false,
          );
        },
        60_000,
      );
      const client = new cassandra.Client({
        contactPoints: [`127.0.0.1:${port}`],
        localDataCenter: backend!.localDataCenter,
        protocolOptions: { port },
      });
      try {
        await client.connect();
        const { rows } = await client.execute('SELECT release_version FROM system.local');
        expect(rows[0]?.['release_version']).toBe(backend!.version);
      } finally {
        await client.shutdown();
      }
      // Ctrl-C: SIGINT to the whole process group, npx and the proxy under it. (A SIGTERM to npx
      // alone ends npx and leaves the proxy running: npx does not pass it on.)
      const exited = new Promise<void>((done) => proxy!.once('exit', () => done()));
      process.kill(-proxy.pid!, 'SIGINT');
      await exited;
      await until('the proxy to drain and free its port', () => canBind(port), 60_000);
    },
    TIMEOUT,
  );
});
