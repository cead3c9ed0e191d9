// A backend answer's warnings (frame flag 0x08) reach the client without the backend's node
// addresses, host ids, ring tokens or node count, in v4 (plain, lz4, snappy) and v5 segments, on
// RESULTs and ERRORs alike: the real ClientConnection in front of a scripted backend. The same
// leaks against the real three-node Cassandra: test/adversarial/response-leaks.cassandra3.test.ts.
import { afterEach, describe, expect, it } from '@jest/globals';
import { frameCompression } from '../../src/protocol/compression.js';
import { Consistency } from '../../src/protocol/consistency.js';
import { splitBody } from '../../src/protocol/envelope.js';
import { decodeError, encodeError } from '../../src/protocol/error-message.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { FrameFlag, Opcode, type Frame } from '../../src/protocol/frame.js';
import { encodeQuery, encodeStartup } from '../../src/protocol/requests.js';
import { Writer } from '../../src/protocol/writer.js';
import type { BackendFootprint } from '../../src/proxy/backend-footprint.js';
import { clientWarning, HIDDEN_HOST_ID, HIDDEN_TOKEN } from '../../src/proxy/response-warnings.js';
import { RawClient } from './raw-client.js';
import { openBackend, REAL_NODE, scriptedProxy, type Script } from './scripted-backend.js';

const footprint: BackendFootprint = {
  addresses: new Set(['10.9.8.7', '10.9.8.6', 'fd00::2']),
  hostIds: new Set([REAL_NODE.hostId]),
  tokens: new Set(['-9223372036854775808', '3074457345618258602', '0']),
};

/** Warnings as Cassandra 5.0 writes them, each naming something of the real ring. */
const NODE_COUNT = 'Your replication factor 5 for keyspace ks is higher than the number of nodes 3';
const NODE_COUNT_DC = 'Your replication factor 4 for keyspace ks is higher than the number of nodes 3 for datacenter dc1';
const RANGE_TOMBSTONES =
  'Read 1100 live rows and 1100 tombstone cells for query SELECT * FROM ks.t WHERE token(k) > 3074457345618258602 ALLOW FILTERING; token 9010454139840013625 (see tombstone_warn_threshold)';
const COORDINATOR_TOMBSTONES =
  '1 nodes scanned up to 1200 tombstones and issued tombstone warnings for query SELECT * FROM ks.t  (see tombstone_warn_threshold) with token range: (-9223372036854775808, 3074457345618258602]';
const ENDPOINTS = 'Read repair from /10.9.8.6:7000 and 10.9.8.7 took long; host 99999999-9999-4999-8999-999999999999';
const HARMLESS = 'Unlogged batch covering 2 partitions detected against table [ks.t]. You should use a logged batch for atomicity';

describe('one warning as a client of the proxy reads it', () => {
  it('drops a warning that states the backend node count, with or without a data center', () => {
    expect(clientWarning(NODE_COUNT, '127.0.0.50', footprint)).toBeUndefined();
    expect(clientWarning(NODE_COUNT_DC, '127.0.0.50', footprint)).toBeUndefined();
  });

  it('hides ring tokens and keeps a partition token', () => {
    expect(clientWarning(RANGE_TOMBSTONES, '127.0.0.50', footprint)).toBe(
      `Read 1100 live rows and 1100 tombstone cells for query SELECT * FROM ks.t WHERE token(k) > ${HIDDEN_TOKEN} ALLOW FILTERING; token 9010454139840013625 (see tombstone_warn_threshold)`,
    );
    expect(clientWarning(COORDINATOR_TOMBSTONES, '127.0.0.50', footprint)).toMatch(
      new RegExp(`with token range: \\(${HIDDEN_TOKEN}, ${HIDDEN_TOKEN}\\]$`),
    );
  });

  it('shows the dialled address for node endpoints and hides host ids', () => {
    expect(clientWarning(ENDPOINTS, '127.0.0.50', footprint)).toBe(
      `Read repair from /127.0.0.50 and 127.0.0.50 took long; host ${HIDDEN_HOST_ID}`,
    );
  });

  it('(review) shows the dialled address for a bare IPv6 node address too', () => {
    expect(clientWarning('Read repair from FD00::2 took long; fd00::20 is not ours', '127.0.0.50', footprint)).toBe(
      'Read repair from 127.0.0.50 took long; fd00::20 is not ours',
    );
  });

  it('(review) keeps small numbers, though a ring may hold a small token (0): they are counts in these messages', () => {
    const counts = 'Read 0 live rows and 1100 tombstone cells for query SELECT * FROM ks.t WHERE token(k) > -9223372036854775808';
    expect(clientWarning(counts, '127.0.0.50', footprint)).toBe(
      `Read 0 live rows and 1100 tombstone cells for query SELECT * FROM ks.t WHERE token(k) > ${HIDDEN_TOKEN}`,
    );
  });

  it('keeps everything else as it is', () => {
    expect(clientWarning(HARMLESS, '127.0.0.50', footprint)).toBe(HARMLESS);
    expect(clientWarning('10.9.8.70 and 3074457345618258603 are not the backend', '127.0.0.50', footprint)).toBe(
      '10.9.8.70 and 3074457345618258603 are not the backend',
    );
  });
});

let running: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(running.map((r) => r.close()));
  running = [];
});

const REAL = [REAL_NODE.address, REAL_NODE.hostId, REAL_NODE.token, 'number of nodes'];
const WARNINGS = [
  NODE_COUNT,
  `Tombstones in token(k) <= ${REAL_NODE.token}`,
  `from /${REAL_NODE.address}:7000`,
  `host ${REAL_NODE.hostId}`,
  HARMLESS,
];
const TRACING_ID = '59b62f10-ef50-11f1-903b-eb637064a48d';

/** An answer body with a tracing id, the warnings and a custom payload before `message`. */
function withExtras(message: Buffer, warnings: readonly string[]): Buffer {
  return new Writer()
    .writeUuid(TRACING_ID)
    .writeStringList(warnings)
    .writeBytesMap(new Map([['k', Buffer.from('v')]]))
    .writeRaw(message)
    .finish();
}

const VOID = Buffer.from([0, 0, 0, 1]);
const EXTRA_FLAGS = FrameFlag.TRACING | FrameFlag.WARNING | FrameFlag.CUSTOM_PAYLOAD;

/** A backend that answers every QUERY with `message` behind the extras, compressed with `compression` if given. */
function warningBackend(opcode: number, message: Buffer, warnings: readonly string[], compression?: string): Script {
  const codec = compression ? frameCompression(compression) : undefined;
  return (request) => {
    if (request.opcode !== Opcode.QUERY) return openBackend(request);
    const body = withExtras(message, warnings);
    return codec
      ? { opcode, flags: EXTRA_FLAGS | FrameFlag.COMPRESSION, body: codec.compress(body) }
      : { opcode, flags: EXTRA_FLAGS, body };
  };
}

/** The client's view of the answer to one QUERY over `version` (5: lz4 segments) with `compression` (v4). */
async function answerThrough(script: Script, version: 4 | 5, compression?: string): Promise<Frame> {
  const proxy = await scriptedProxy(script);
  running.push(proxy);
  // The scripted context negotiates no compression; here the client and "backend" share one.
  proxy.context.codec = (name) => frameCompression(name);
  const client = await RawClient.open(proxy.address);
  running.push({ close: async () => client.close() });
  const options = new Map([['CQL_VERSION', '3.0.0']]);
  if (compression) options.set('COMPRESSION', compression);
  client.send(version, 1, Opcode.STARTUP, encodeStartup({ options }));
  expect((await client.next(1))?.opcode).toBe(Opcode.READY);
  if (version === 5) client.useSegments(compression === 'lz4');
  else if (compression) client.useCompression(compression);
  client.send(
    version,
    2,
    Opcode.QUERY,
    encodeQuery({ query: 'SELECT * FROM ks.t', parameters: { consistency: Consistency.ONE } }, version),
  );
  const frame = await client.next(2);
  if (!frame) throw new Error('the proxy closed the connection');
  return { ...frame, flags: frame.flags & ~FrameFlag.COMPRESSION };
}

describe('warnings through a client connection', () => {
  it.each([
    { version: 4 as const, compression: undefined },
    { version: 4 as const, compression: 'lz4' },
    { version: 4 as const, compression: 'snappy' },
    { version: 5 as const, compression: undefined },
    { version: 5 as const, compression: 'lz4' },
  ])(
    'v$version with compression $compression: a RESULT keeps its tracing id, payload and harmless warnings',
    async ({ version, compression }) => {
      const frame = await answerThrough(
        warningBackend(Opcode.RESULT, VOID, WARNINGS, version === 4 ? compression : undefined),
        version,
        compression,
      );
      const text = frame.body.toString('latin1');
      for (const real of REAL) expect(text).not.toContain(real);
      expect(frame.opcode).toBe(Opcode.RESULT);
      const { extras, message } = splitBody(frame);
      expect(extras.tracingId).toBe(TRACING_ID);
      expect(extras.warnings).toEqual([`Tombstones in token(k) <= ${HIDDEN_TOKEN}`, 'from /127.0.0.1', `host ${HIDDEN_HOST_ID}`, HARMLESS]);
      expect(extras.customPayload?.get('k')).toEqual(Buffer.from('v'));
      expect(message).toEqual(VOID);
    },
  );

  it('an ERROR with warnings: the warnings are rewritten, the error kept', async () => {
    const error = encodeError({ code: ErrorCode.INVALID, message: 'unconfigured table t' });
    const frame = await answerThrough(warningBackend(Opcode.ERROR, error, WARNINGS), 4);
    for (const real of REAL) expect(frame.body.toString('latin1')).not.toContain(real);
    const { extras, message } = splitBody(frame);
    expect(extras.warnings).toHaveLength(4);
    expect(decodeError(message)).toEqual({ code: ErrorCode.INVALID, message: 'unconfigured table t' });
  });

  it('an answer whose only warning is dropped loses the warning flag, and keeps the rest', async () => {
    const frame = await answerThrough(warningBackend(Opcode.RESULT, VOID, [NODE_COUNT], 'lz4'), 4, 'lz4');
    expect(frame.flags & FrameFlag.WARNING).toBe(0);
    expect(frame.flags & (FrameFlag.TRACING | FrameFlag.CUSTOM_PAYLOAD)).toBe(FrameFlag.TRACING | FrameFlag.CUSTOM_PAYLOAD);
    const { extras, message } = splitBody(frame);
    expect(extras.warnings).toBeUndefined();
    expect(extras.tracingId).toBe(TRACING_ID);
    expect(message).toEqual(VOID);
  });

  it('a compressed answer larger than limits.maxFrameBytes (which bounds requests) still has its warnings rewritten', async () => {
    const rows = Buffer.concat([VOID, Buffer.alloc(64 * 1024, 1)]);
    const proxy = await scriptedProxy(warningBackend(Opcode.RESULT, rows, WARNINGS, 'lz4'));
    running.push(proxy);
    proxy.context.codec = (name) => frameCompression(name);
    (proxy.context.config.limits as { maxFrameBytes: number }).maxFrameBytes = 16 * 1024;
    const client = await RawClient.open(proxy.address);
    running.push({ close: async () => client.close() });
    client.send(
      4,
      1,
      Opcode.STARTUP,
      encodeStartup({
        options: new Map([
          ['CQL_VERSION', '3.0.0'],
          ['COMPRESSION', 'lz4'],
        ]),
      }),
    );
    expect((await client.next(1))?.opcode).toBe(Opcode.READY);
    client.useCompression('lz4');
    client.send(4, 2, Opcode.QUERY, encodeQuery({ query: 'SELECT * FROM ks.t', parameters: { consistency: Consistency.ONE } }, 4));
    const frame = (await client.next(2))!;
    expect(frame.opcode).toBe(Opcode.RESULT);
    const { extras, message } = splitBody({ ...frame, flags: frame.flags & ~FrameFlag.COMPRESSION });
    expect(extras.warnings).toHaveLength(4);
    expect(message).toEqual(rows);
  });

  it('an answer whose warnings need no change comes through as the backend sent it', async () => {
    const frame = await answerThrough(warningBackend(Opcode.RESULT, VOID, [HARMLESS]), 4);
    expect(frame.flags).toBe(EXTRA_FLAGS);
    expect(frame.body).toEqual(withExtras(VOID, [HARMLESS]));
  });
});
