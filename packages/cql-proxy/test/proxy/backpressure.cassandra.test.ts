// Backpressure: a client that sends and never reads its answers must not make the proxy buffer
// without bound. Three million OPTIONS (26 MiB) would be answered with ≈300 MiB of SUPPORTED; the
// proxy stops reading the client once its answers back up, so its memory stays near its idle size
// (with the pause disabled it read everything and grew by ≈450 MiB when tried). The proxy runs as its
// own process (the CLI), so its peak RSS is its own.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import cassandra from 'cassandra-driver';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { testServer } from '../../../../scripts/testenv/state.mjs';
import { encodeFrameHeader, Opcode } from '../../src/protocol/frame.js';
import { freePort, until, type CassandraEntry } from './harness.js';

const backend = testServer<CassandraEntry>('cassandra');
const TIMEOUT = 120_000;
const bin = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));

/** Peak resident memory of a process in MiB (Linux /proc). */
const peakRssMiB = (pid: number) => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

(backend ? describe : describe.skip)('backpressure', () => {
  let child: ChildProcess;
  let port: number;
  beforeAll(async () => {
    [port] = [await freePort()];
    const http = await freePort();
    const dir = mkdtempSync(join(tmpdir(), 'muster-backpressure-'));
    const config = join(dir, 'proxy.yaml');
    writeFileSync(
      config,
      `discovery: { adapter: static, options: { members: [{ id: bp, address: 127.0.0.1, port: ${port} }], self: bp } }
heartbeat: { adapter: static }
proxy:
  listen: { host: 127.0.0.1, port: ${port} }
  http: { host: 127.0.0.1, port: ${http} }
  backend: { contactPoints: [${backend!.contactPoints.join(', ')}] }
  log: { level: warn }
`,
    );
    child = spawn(process.execPath, [bin, '--config', config], { stdio: 'inherit', env: { ...process.env, NODE_OPTIONS: '' } });
    for (let i = 0; ; i++) {
      const ready = await fetch(`http://127.0.0.1:${http}/health/readiness`).then(
        (r) => r.ok,
        () => false,
      );
      if (ready) break;
      if (i > 600) throw new Error('the proxy did not become ready within 60 s');
      await new Promise((r) => setTimeout(r, 100));
    }
  }, TIMEOUT);
  afterAll(() => {
    child?.kill('SIGKILL');
  });

  it(
    'a client that does not read is not read from either; reading again resumes it; others are served',
    async () => {
      const one = encodeFrameHeader({ version: 4, response: false, flags: 0, stream: 1, opcode: Opcode.OPTIONS }, 0);
      const count = 3_000_000;
      const burst = Buffer.alloc(one.length * count);
      for (let i = 0; i < count; i++) one.copy(burst, i * one.length);
      const before = peakRssMiB(child.pid!);

      const socket = connect({ host: '127.0.0.1', port });
      await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
      socket.pause(); // never read: answers fill the kernel's buffers, then would pile up in the proxy
      for (let at = 0; at < burst.length; at += 65_536) socket.write(burst.subarray(at, at + 65_536));
      // Time enough for a proxy without backpressure to take (and answer) all of it.
      await new Promise((r) => setTimeout(r, 5000));
      const peak = peakRssMiB(child.pid!);
      console.log(`proxy peak RSS ${before.toFixed(0)} MiB idle, ${peak.toFixed(0)} MiB with a client that does not read`);
      expect(peak - before).toBeLessThan(150);

      const other = new cassandra.Client({ contactPoints: [`127.0.0.1:${port}`], localDataCenter: backend!.localDataCenter });
      try {
        await other.connect();
        expect((await other.execute('SELECT release_version FROM system.local')).rows).toHaveLength(1);
      } finally {
        await other.shutdown();
      }

      let received = 0;
      socket.on('data', (chunk: Buffer) => (received += chunk.length));
      socket.resume();
      await until('answers to flow again once the client reads', () => received > 8 * 1024 * 1024, 60_000);
      socket.destroy();
    },
    TIMEOUT,
  );
});
