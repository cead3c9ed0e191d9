// npm start as a newcomer runs it: a child process, three proxy processes in front of the testenv
// Cassandra (the running one is reused, so no second JVM), a real driver seeing all three hosts,
// and SIGTERM stopping every process it started.
import { afterAll, describe, expect, it } from '@jest/globals';
import cassandra from 'cassandra-driver';
import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createServer, type AddressInfo } from 'node:net';
import { testServer } from '../../testenv/state.mjs';

const script = join(dirname(fileURLToPath(import.meta.url)), '../start.mjs');
const backend = testServer<{ localDataCenter: string; contactPoints: string[] }>('cassandra');
const TIMEOUT = 180_000;

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

(backend ? describe : describe.skip)('npm start', () => {
  let child: ChildProcess | undefined;
  let output = '';
  afterAll(() => {
    if (child?.exitCode === null) child.kill('SIGKILL');
  });

  it(
    'runs three proxies a driver sees as three hosts, prints how to connect, and stops them on SIGTERM',
    async () => {
      const port = await freePort();
      const httpPort = await freePort();
      child = spawn(process.execPath, [script, '--port', String(port), '--http-port', String(httpPort)], {
        env: { ...process.env, NODE_OPTIONS: '' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
      child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
      const exited = new Promise<number | null>((resolve) => child!.once('exit', resolve));
      await new Promise<void>((resolve, reject) => {
        const poll = setInterval(() => {
          if (/\[muster start\] running \(pids/.test(output)) resolve();
          else if (child!.exitCode !== null) reject(new Error(`npm start exited early:\n${output}`));
          else return;
          clearInterval(poll);
        }, 100);
      });
      expect(output).toContain(`using the running testenv Cassandra ${backend!.contactPoints.join(', ')}`);
      expect(output).toContain(`cqlsh 127.0.0.1 ${port}`);
      expect(output).toContain(`protocolOptions: { port: ${port} }`);
      for (const host of ['127.0.0.1', '127.0.0.2', '127.0.0.3']) expect(output).toContain(`http://${host}:${httpPort}/topology`);
      const pids = /running \(pids ([\d, ]+)\)/.exec(output)![1]!.split(', ').map(Number);
      expect(pids).toHaveLength(3);

      const client = new cassandra.Client({
        contactPoints: [`127.0.0.2:${port}`],
        localDataCenter: backend!.localDataCenter,
        protocolOptions: { port },
      });
      try {
        await client.connect();
        const addresses = () =>
          client.hosts
            .values()
            .map((h) => h.address)
            .sort();
        // Each proxy learns its peers by probing them: on a loaded machine a probe can miss once, and
        // the driver hears the peer come back as an event. Wait for that, bounded, instead of a snapshot.
        for (const deadline = Date.now() + 30_000; addresses().length < 3 && Date.now() < deadline;) {
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
        const hosts = addresses();
        expect(hosts).toEqual([`127.0.0.1:${port}`, `127.0.0.2:${port}`, `127.0.0.3:${port}`]);
        const { rows } = await client.execute('SELECT peer FROM system.peers');
        expect(rows).toHaveLength(2);
      } finally {
        await client.shutdown();
      }

      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(pids.filter((pid) => isAlive(pid))).toEqual([]);
      expect(output).not.toContain('stopping the Cassandra it started');
    },
    TIMEOUT,
  );
});
