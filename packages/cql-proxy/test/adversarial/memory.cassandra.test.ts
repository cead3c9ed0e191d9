// Memory under hostile clients (issue 12 defect 6), proxy in its own process, RSS from /proc:
// partly sent large frames on many connections stop at the proxy-wide cap on buffered bytes, and a
// client that pipelines requests for big rows and never reads makes the proxy stop reading the
// backend for it instead of buffering the answers; a v5 envelope sent in one-byte segments is held
// in memory proportional to its bytes, not to its segments.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import cassandra from 'cassandra-driver';
import { testServer } from '../../../../scripts/testenv/state.mjs';
import { decodeError } from '../../src/protocol/error-message.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { Opcode } from '../../src/protocol/frame.js';
import { encodeQuery } from '../../src/protocol/requests.js';
import { encodeSegment } from '../../src/protocol/segment.js';
import type { CassandraEntry } from '../proxy/harness.js';
import type { RawClient } from '../proxy/raw-client.js';
import { frame } from './cases.js';
import { ProxyProcess } from './proxy-process.js';
import { printTable, type ClassResult } from './report.js';
import { connection } from './runner.js';

const backend = testServer<CassandraEntry>('cassandra');
const TIMEOUT = 180_000;
const MiB = 1024 * 1024;
const keyspace = `muster_adv_${process.pid}`;

/** `envelope` as v5 segments of one payload byte each, not self-contained: eleven bytes on the wire per byte. */
function oneByteSegments(envelope: Buffer): Buffer {
  const segments = new Map<number, Buffer>();
  const wire = Buffer.allocUnsafe(envelope.length * 11);
  for (let i = 0; i < envelope.length; i++) {
    const byte = envelope[i]!;
    let segment = segments.get(byte);
    if (!segment) segments.set(byte, (segment = Buffer.concat(encodeSegment([Buffer.from([byte])], false))));
    segment.copy(wire, i * 11);
  }
  return wire;
}

(backend ? describe : describe.skip)('memory under hostile clients', () => {
  // A proxy per test: memory one test freed stays in the process and would hide the next one's growth.
  let proxy: ProxyProcess;
  let admin: cassandra.Client;
  const results: ClassResult[] = [];
  beforeAll(async () => {
    admin = new cassandra.Client({ contactPoints: backend!.contactPoints, localDataCenter: backend!.localDataCenter });
    await admin.connect();
    await admin.execute(`CREATE KEYSPACE IF NOT EXISTS ${keyspace} WITH replication = {'class':'SimpleStrategy','replication_factor':1}`);
    await admin.execute(`CREATE TABLE IF NOT EXISTS ${keyspace}.rows (k int PRIMARY KEY, v blob)`);
    await admin.execute(`INSERT INTO ${keyspace}.rows (k, v) VALUES (0, ?)`, [Buffer.alloc(256 * 1024, 7)], { prepare: true });
  }, TIMEOUT);
  beforeEach(async () => {
    proxy = await ProxyProcess.start(backend!, '  connections: { maxBufferedBytes: 33554432 }');
  }, TIMEOUT);
  afterEach(() => proxy?.stop());
  afterAll(async () => {
    printTable('Memory (proxy-wide buffered-bytes cap 32 MiB, maxFrameBytes 16 MiB; a fresh proxy per class)', results);
    await admin?.execute(`DROP KEYSPACE IF EXISTS ${keyspace}`).catch(() => undefined);
    await admin?.shutdown();
  }, TIMEOUT);

  it(
    'twelve connections each sending 8 MiB of a 15 MiB frame: beyond 32 MiB in all, they are refused with OVERLOADED',
    async () => {
      const rssBefore = proxy.rss();
      const clients: RawClient[] = [];
      const part = frame(4, 0, 1, Opcode.QUERY, Buffer.alloc(8 * MiB, 0x20), 15 * MiB).subarray(0, 9 + 8 * MiB);
      let refused = 0;
      for (let i = 0; i < 12; i++) {
        const client = await connection(proxy, 'startup', `127.0.1.${i + 1}`);
        clients.push(client);
        client.socket.write(part);
        // Either the proxy holds the partial frame (no answer), or it refuses the client at once.
        const reply = await client.next(undefined, 1500).catch(() => undefined);
        if (reply?.opcode === Opcode.ERROR && decodeError(reply.body).code === ErrorCode.OVERLOADED) refused++;
      }
      const peak = proxy.peakRss();
      for (const c of clients) c.close();
      const freshClient = await proxy.works();
      results.push({
        name: 'partial 15 MiB frames × 12',
        cases: 12,
        crashes: proxy.exited ? 1 : 0,
        wrong: refused >= 8 ? 0 : 12 - 4 - refused,
        rssBefore,
        rssAfter: proxy.rss(),
        peakRss: peak,
        freshClient,
        note: `${refused} refused with OVERLOADED`,
      });
      // 32 MiB hold four 8 MiB partial frames (the fourth may just miss): eight or more are refused.
      expect(refused).toBeGreaterThanOrEqual(8);
      expect(peak - rssBefore).toBeLessThan(80);
      expect(freshClient).toBe(true);
    },
    TIMEOUT,
  );

  it(
    'a client that pipelines 300 requests for 256 KiB rows and never reads: the proxy stops reading the backend for it',
    async () => {
      const rssBefore = proxy.rss();
      const client = await connection(proxy, 'startup', '127.0.2.1');
      const query = encodeQuery({ query: `SELECT v FROM ${keyspace}.rows WHERE k = 0`, parameters: { consistency: 1 } }, 4);
      client.socket.pause(); // never reads: 75 MiB of answers would pile up somewhere
      const count = 300;
      for (let i = 1; i <= count; i++) client.socket.write(frame(4, 0, i, Opcode.QUERY, query));
      // Time for a proxy without backend backpressure to read and buffer every answer (it does so
      // within a second or two); the bound below fails as soon as that happens.
      let peak = proxy.peakRss();
      for (let waited = 0; waited < 8000 && peak - rssBefore < 60; waited += 250) {
        await new Promise((r) => setTimeout(r, 250));
        peak = proxy.peakRss();
      }
      const servedMeanwhile = await proxy.works();
      let answers = 0;
      client.socket.resume();
      while (answers < count) {
        const next = await client.next(undefined, 60_000).catch(() => undefined);
        if (!next) break;
        if (next.opcode === Opcode.RESULT) answers++;
      }
      client.close();
      results.push({
        name: 'pipelined 256 KiB rows, client never reads',
        cases: count,
        crashes: proxy.exited ? 1 : 0,
        wrong: count - answers,
        rssBefore,
        rssAfter: proxy.rss(),
        peakRss: peak,
        freshClient: servedMeanwhile,
        note: `${answers}/${count} answers after it read`,
      });
      expect(peak - rssBefore).toBeLessThan(60);
      expect(servedMeanwhile).toBe(true);
      expect(answers).toBe(count);
    },
    TIMEOUT,
  );

  // Each one-byte segment's payload was held as a view of its own (about 150 bytes of memory each)
  // until the envelope was whole: this 2 MiB envelope raised the proxy's RSS by about 300 MiB, and
  // one of 16 MiB (the default maxFrameBytes) would take over 2 GiB, well within maxBufferedBytes.
  it(
    'a 2 MiB v5 envelope in one-byte segments (22 MiB on the wire): held as its 2 MiB, not as two million views',
    async () => {
      const rssBefore = proxy.rss();
      const client = await connection(proxy, 'v5', '127.0.3.1');
      const envelope = frame(5, 0, 7, Opcode.QUERY, Buffer.alloc(2 * MiB, 0x20));
      client.socket.write(oneByteSegments(envelope));
      // Spaces make a statement length the body cannot hold: the answer says the whole envelope was read.
      const reply = await client.next(7, 120_000).catch(() => undefined);
      const peak = proxy.peakRss();
      client.close();
      const freshClient = await proxy.works();
      const answered = reply?.opcode === Opcode.ERROR && decodeError(reply.body).code === ErrorCode.PROTOCOL_ERROR;
      results.push({
        name: '2 MiB envelope in one-byte v5 segments',
        cases: 1,
        crashes: proxy.exited ? 1 : 0,
        wrong: answered ? 0 : 1,
        rssBefore,
        rssAfter: proxy.rss(),
        peakRss: peak,
        freshClient,
        note: answered ? 'answered PROTOCOL_ERROR' : `answered ${reply ? `opcode ${reply.opcode}` : 'nothing'}`,
      });
      expect(answered).toBe(true);
      expect(peak - rssBefore).toBeLessThan(100);
      expect(freshClient).toBe(true);
    },
    TIMEOUT,
  );
});
