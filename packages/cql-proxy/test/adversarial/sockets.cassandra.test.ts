// Slow, silent and flooding sockets (issue 12 defect 5). Hostile sockets come from other 127/8
// addresses than the legitimate driver (127.0.0.1); none of them may lock it out, and every socket
// the proxy accepts is bounded in time and eventually destroyed: its descriptors come back.
// Small limits and deadlines keep the file fast: 64 connections, 2 s handshake, 0.5 s close grace.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { Duplex } from 'node:stream';
import { connect as tlsConnect } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeServerCertificate } from '../../../../scripts/testenv/certificates.mjs';
import { testServer } from '../../../../scripts/testenv/state.mjs';
import { decodeError } from '../../src/protocol/error-message.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { Opcode } from '../../src/protocol/frame.js';
import { until, type CassandraEntry } from '../proxy/harness.js';
import { frame } from './cases.js';
import { ProxyProcess } from './proxy-process.js';
import { printTable, type ClassResult } from './report.js';
import { connection } from './runner.js';
import type { RawClient } from '../proxy/raw-client.js';

const backend = testServer<CassandraEntry>('cassandra');
const TIMEOUT = 120_000;
const LIMITS = `  limits: { maxClientConnections: 64 }
  connections: { handshakeTimeout: 2s, tlsHandshakeTimeout: 1s, idleTimeout: 6s, maxHandshaking: 32, maxPerAddress: 24, maxHandshakingPerAddress: 8, closeGrace: 500ms }`;

/** A plain socket from `localAddress`, resolved once connected; `closed` tells whether the proxy let go. */
function open(port: number, localAddress: string, allowHalfOpen = false): Promise<Socket & { closedByPeer?: boolean }> {
  return new Promise((resolve, reject) => {
    const socket: Socket & { closedByPeer?: boolean } = connect({ host: '127.0.0.1', port, localAddress, allowHalfOpen }, () =>
      resolve(socket),
    );
    socket.once('error', reject);
    socket.on('error', () => undefined);
    socket.once('close', () => (socket.closedByPeer = true));
  });
}

/** Polls an async condition for up to `ms`; true once it holds. */
async function eventually(check: () => Promise<boolean>, ms = 10_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

/** `n` sockets from `localAddress`, opened one after another (the proxy may close some at once). */
const openMany = async (port: number, localAddress: string, n: number, allowHalfOpen = false) => {
  const out: (Socket & { closedByPeer?: boolean })[] = [];
  for (let i = 0; i < n; i++) out.push(await open(port, localAddress, allowHalfOpen));
  return out;
};

(backend ? describe : describe.skip)('slow, silent and flooding sockets', () => {
  let proxy: ProxyProcess;
  let baselineFds: number;
  const results: ClassResult[] = [];
  beforeAll(async () => {
    proxy = await ProxyProcess.start(backend!, LIMITS);
    baselineFds = proxy.fds();
  }, TIMEOUT);
  afterAll(() => {
    printTable(`Sockets (limits: 64 connections, 32 handshaking, 24 per address, 8 handshaking per address, handshake 2 s)`, results);
    proxy?.stop();
  });

  const record = async (name: string, cases: number, wrong: number, rssBefore: number, note: string) => {
    const freshClient = await proxy.works();
    const result = {
      name,
      cases,
      crashes: proxy.exited ? 1 : 0,
      wrong,
      rssBefore,
      rssAfter: proxy.rss(),
      peakRss: proxy.peakRss(),
      freshClient,
      note,
    };
    results.push(result);
    return result;
  };

  it(
    'slowloris: 70 sockets from one address sending a header byte a second never lock out a driver from another',
    async () => {
      const rssBefore = proxy.rss();
      const slow = await openMany(proxy.port, '127.0.0.2', 70);
      const header = frame(4, 0, 1, Opcode.OPTIONS, Buffer.alloc(0));
      let sent = 0;
      const drip = setInterval(() => {
        sent = Math.min(sent + 1, 8);
        for (const s of slow) if (!s.closedByPeer) s.write(header.subarray(sent - 1, sent));
      }, 1000);
      try {
        // While they drip: the driver from 127.0.0.1 gets in.
        const servedDuring = await proxy.works();
        await until('the proxy to destroy every slow socket', () => slow.every((s) => s.closedByPeer), 30_000).catch(() => false);
        const held = slow.filter((s) => !s.closedByPeer).length;
        const result = await record(
          'slowloris (1 byte/s)',
          slow.length,
          held + (servedDuring ? 0 : 1),
          rssBefore,
          `driver served during: ${servedDuring}; still open: ${held}`,
        );
        expect(servedDuring).toBe(true);
        expect(held).toBe(0);
        expect(result.freshClient).toBe(true);
      } finally {
        clearInterval(drip);
        for (const s of slow) s.destroy();
      }
    },
    TIMEOUT,
  );

  it(
    'silent sockets are destroyed at the handshake deadline and their descriptors come back',
    async () => {
      const rssBefore = proxy.rss();
      const silent = await openMany(proxy.port, '127.0.0.3', 40);
      try {
        await until('the proxy to destroy every silent socket', () => silent.every((s) => s.closedByPeer), 30_000).catch(() => false);
        const held = silent.filter((s) => !s.closedByPeer).length;
        await until('the proxy to close their descriptors', () => proxy.fds() <= baselineFds + 2, 10_000).catch(() => false);
        const result = await record('silent sockets', silent.length, held, rssBefore, `fds ${proxy.fds()} (baseline ${baselineFds})`);
        expect(held).toBe(0);
        expect(proxy.fds()).toBeLessThanOrEqual(baselineFds + 2);
        expect(result.freshClient).toBe(true);
      } finally {
        for (const s of silent) s.destroy();
      }
    },
    TIMEOUT,
  );

  it(
    'clients that get a PROTOCOL_ERROR and never close are destroyed after the grace period: no descriptor leaks',
    async () => {
      const rssBefore = proxy.rss();
      const bad = await openMany(proxy.port, '127.0.0.4', 8, true);
      const more: typeof bad = [];
      // Eight at a time (the per-address handshake limit), 48 in all; none of them closes its end
      // (allowHalfOpen: the proxy's end() alone does not close them).
      for (let round = 0; round < 6; round++) {
        const batch = round === 0 ? bad : await openMany(proxy.port, '127.0.0.4', 8, true);
        if (round > 0) more.push(...batch);
        // An error answer, or (once too many refused sockets wait for theirs) a FIN without one,
        // which a half-open client may not even report: after 3 s the proxy's side is what counts.
        const answered = batch.map(
          (s) =>
            new Promise<void>((resolve) => {
              if (s.closedByPeer) return resolve();
              s.once('data', () => resolve())
                .once('end', () => resolve())
                .once('close', () => resolve());
              setTimeout(resolve, 3000).unref();
            }),
        );
        for (const s of batch) s.write(Buffer.from([0x42, 0, 0, 1, Opcode.OPTIONS, 0, 0, 0, 0]));
        await Promise.all(answered);
      }
      const all = [...bad, ...more];
      // These clients cannot see the proxy let go (they ignore its FIN); its descriptors can.
      await until('the descriptors to come back', () => proxy.fds() <= baselineFds + 2, 10_000).catch(() => false);
      const leaked = Math.max(0, proxy.fds() - baselineFds - 2);
      const result = await record('error, never closed', all.length, leaked, rssBefore, `fds ${proxy.fds()} (baseline ${baselineFds})`);
      for (const s of all) s.destroy();
      expect(leaked).toBe(0);
      expect(await eventually(async () => (await proxy.metric('muster_proxy_client_sockets')) === 0)).toBe(true);
      expect(result.freshClient).toBe(true);
    },
    TIMEOUT,
  );

  it(
    'a flood of established connections from one address stops at the per-address limit; others still get in',
    async () => {
      const rssBefore = proxy.rss();
      const clients: RawClient[] = [];
      let ready = 0;
      let refused = 0;
      // Five waves of eight (the per-address handshake limit), fast enough that none goes idle.
      for (let wave = 0; wave < 5; wave++) {
        const outcomes = await Promise.allSettled(Array.from({ length: 8 }, () => connection(proxy, 'startup', '127.0.0.5')));
        for (const outcome of outcomes) {
          if (outcome.status === 'fulfilled') {
            clients.push(outcome.value);
            ready++;
          } else if (/opcode 0|close/.test((outcome.reason as Error).message)) refused++;
          else throw outcome.reason;
        }
      }
      const servedDuring = await proxy.works();
      const result = await record(
        'flood past the per-address limit',
        40,
        ready > 24 || !servedDuring ? 1 : 0,
        rssBefore,
        `READY ${ready}, refused ${refused}, driver served: ${servedDuring}`,
      );
      for (const c of clients) c.close();
      expect(ready).toBe(24);
      expect(refused).toBe(16);
      expect(servedDuring).toBe(true);
      expect(result.freshClient).toBe(true);
    },
    TIMEOUT,
  );

  it(
    'a refused connection is told why in a CQL error it can read',
    async () => {
      // Eight sockets in their handshake from one address (they stay silent), then a ninth.
      const silent = await openMany(proxy.port, '127.0.0.6', 8);
      try {
        const extra = await connection(proxy, 'none', '127.0.0.6');
        extra.send(4, 9, Opcode.OPTIONS, Buffer.alloc(0));
        const reply = await extra.next(9);
        expect(reply?.opcode).toBe(Opcode.ERROR);
        expect(decodeError(reply!.body)).toMatchObject({
          code: ErrorCode.OVERLOADED,
          message: 'Too many connections in their handshake from 127.0.0.6 (8); retry shortly',
        });
        expect(await extra.next(undefined, 5000)).toBeUndefined();
      } finally {
        for (const s of silent) s.destroy();
      }
    },
    TIMEOUT,
  );

  it(
    'an idle established connection is closed after idleTimeout',
    async () => {
      const rssBefore = proxy.rss();
      const idle = await connection(proxy, 'startup', '127.0.0.7');
      const closed = await until('the proxy to close the idle connection', () => idle.closed, 20_000).catch(() => false);
      await record('idle established connection', 1, closed ? 0 : 1, rssBefore, 'idleTimeout 6 s');
      idle.close();
      expect(closed).toBe(true);
    },
    TIMEOUT,
  );
});

(backend ? describe : describe.skip)('TLS handshakes', () => {
  let proxy: ProxyProcess;
  beforeAll(async () => {
    const tls = await makeServerCertificate(mkdtempSync(join(tmpdir(), 'muster-adv-tls-')), { cn: '127.0.0.1', sans: ['IP:127.0.0.1'] });
    // The handshake deadline far beyond the TLS one: a socket dropped within seconds was dropped by the TLS deadline.
    const limits = LIMITS.replace('handshakeTimeout: 2s', 'handshakeTimeout: 60s');
    proxy = await ProxyProcess.start(backend!, `${limits}\n  tls: { certFile: ${tls.certFile}, keyFile: ${tls.keyFile} }`, {
      sslOptions: { ca: [readFileSync(tls.caFile)], servername: '127.0.0.1' } as never,
    });
  }, TIMEOUT);
  afterAll(() => proxy?.stop());

  it(
    'a TCP socket that never starts its handshake is dropped at tlsHandshakeTimeout; handshakes count against the limits',
    async () => {
      const refusedBefore = await proxy.metric('muster_proxy_errors_total{kind="connection_refused"}');
      const silent = await openMany(proxy.port, '127.0.0.8', 10);
      try {
        // Eight may handshake at once from one address; the other two are refused at accept.
        const closed = await until('the proxy to drop every silent TLS socket', () => silent.every((s) => s.closedByPeer), 20_000).catch(
          () => false,
        );
        expect(closed).toBe(true);
        expect((await proxy.metric('muster_proxy_errors_total{kind="connection_refused"}')) - refusedBefore).toBe(2);
        expect(await proxy.works()).toBe(true);
      } finally {
        for (const s of silent) s.destroy();
      }
    },
    TIMEOUT,
  );

  // Node's tls.Server reports a handshake timeout as 'tlsClientError' and leaves the socket open
  // to the listener: one that stalled after its ClientHello (or half way through it) held its slot
  // until the CQL handshake deadline, twice the TLS one by default.
  it(
    'a socket that stalls after its ClientHello, or half way through it, is dropped at tlsHandshakeTimeout',
    async () => {
      const hello = await clientHello();
      const stalled = [await open(proxy.port, '127.0.0.9'), await open(proxy.port, '127.0.0.9')];
      stalled[0]!.write(hello);
      stalled[1]!.write(hello.subarray(0, hello.length >> 1));
      // Read what the proxy sends (its ServerHello): a socket that does not read never sees the FIN behind it.
      for (const s of stalled) s.resume();
      try {
        const closed = await until('the proxy to drop both stalled handshakes', () => stalled.every((s) => s.closedByPeer), 20_000).catch(
          () => false,
        );
        expect(closed).toBe(true);
        expect(await proxy.works()).toBe(true);
      } finally {
        for (const s of stalled) s.destroy();
      }
    },
    TIMEOUT,
  );
});

/** The bytes of a TLS ClientHello, as Node's client sends it first. */
function clientHello(): Promise<Buffer> {
  return new Promise((resolve) => {
    const wire = new Duplex({
      read: () => undefined,
      write: (chunk: Buffer, _encoding, done) => {
        resolve(Buffer.from(chunk));
        done();
      },
    });
    const client = tlsConnect({ socket: wire, servername: 'localhost', rejectUnauthorized: false });
    client.on('error', () => undefined);
    setImmediate(() => client.destroy());
  });
}
