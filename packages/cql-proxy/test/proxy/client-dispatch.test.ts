// What one client connection answers itself, refuses, or sends on, before and around the request
// a client makes: the real ClientConnection and system-table intercept in front of a scripted
// backend (test/proxy/scripted-backend.ts), so every case runs without a Cassandra. The same
// defects are checked against the real server in custom-payload.cassandra.test.ts and
// auth.cassandra.test.ts.
import { afterEach, describe, expect, it } from '@jest/globals';
import { decodeCell, encodeCell } from '../../src/protocol/cells.js';
import { Consistency } from '../../src/protocol/consistency.js';
import { decodeError, encodeError } from '../../src/protocol/error-message.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { FrameFlag, Opcode, type Frame } from '../../src/protocol/frame.js';
import { encodeAuthToken, encodeExecute, encodePrepare, encodeQuery, encodeRegister, encodeStartup } from '../../src/protocol/requests.js';
import { decodeResult, encodeResult } from '../../src/protocol/result.js';
import { DataTypeId, types, type DataType } from '../../src/protocol/types.js';
import { Writer } from '../../src/protocol/writer.js';
import { BackendConnectionError } from '../../src/proxy/backend-connection.js';
import { RawClient } from './raw-client.js';
import { openBackend, REAL_NODE, scriptedProxy, type Forwarded, type Script } from './scripted-backend.js';

let running: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(running.map((r) => r.close()));
  running = [];
});

async function proxyWith(script: Script) {
  const proxy = await scriptedProxy(script);
  running.push(proxy);
  const client = await RawClient.open(proxy.address);
  running.push({ close: async () => client.close() });
  return { ...proxy, client };
}

const startup = encodeStartup({ options: new Map([['CQL_VERSION', '3.0.0']]) });
const query = (text: string, version = 4) => encodeQuery({ query: text, parameters: { consistency: Consistency.ONE } }, version);
const payload = (entries: Record<string, string>) =>
  new Writer().writeBytesMap(new Map(Object.entries(entries).map(([k, v]) => [k, Buffer.from(v)]))).finish();

/** The rows of a RESULT Rows frame, as objects. */
function rowsOf(frame: Frame | undefined, version = 4): Record<string, unknown>[] {
  expect(frame).toBeDefined();
  if (frame!.opcode === Opcode.ERROR) throw new Error(`ERROR: ${decodeError(frame!.body).message}`);
  const result = decodeResult(frame!.body, version);
  if (result.kind !== 'Rows') throw new Error(`RESULT ${result.kind}`);
  const columns = result.metadata.columns ?? [];
  return result.rows.map((cells) => Object.fromEntries(columns.map((c, i) => [c.name, decodeCell(c.type, cells[i] ?? null)])));
}

function errorOf(frame: Frame | undefined) {
  expect(frame?.opcode).toBe(Opcode.ERROR);
  return decodeError(frame!.body);
}

const statementsForwarded = (forwarded: Forwarded[]) =>
  forwarded.filter((f) => f.opcode !== Opcode.STARTUP && f.opcode !== Opcode.AUTH_RESPONSE);

describe('custom payload (frame flag 0x04)', () => {
  it.each([
    ['an empty payload', {}],
    ['a DSE-style payload', { 'dse.proxy_execute': 'someone', k: 'v' }],
  ])('a system.peers QUERY behind %s is answered from the virtual cluster, never forwarded', async (_what, entries) => {
    const { client, forwarded } = await proxyWith(openBackend);
    client.send(4, 1, Opcode.STARTUP, startup);
    expect((await client.next(1))?.opcode).toBe(Opcode.READY);
    const body = Buffer.concat([payload(entries), query('SELECT peer, host_id, tokens FROM system.peers')]);
    client.send(4, 2, Opcode.QUERY, body, FrameFlag.CUSTOM_PAYLOAD);
    const rows = rowsOf(await client.next(2));
    expect(rows.map((r) => r.peer)).toEqual(['127.0.0.51']);
    expect(statementsForwarded(forwarded)).toEqual([]);
  });

  it('PREPARE and EXECUTE behind a payload are prepared and answered by the proxy', async () => {
    const { client, forwarded } = await proxyWith(openBackend);
    client.send(4, 1, Opcode.STARTUP, startup);
    await client.next(1);
    const prepare = Buffer.concat([payload({ a: 'b' }), encodePrepare({ query: 'SELECT host_id FROM system.local WHERE key = ?' }, 4)]);
    client.send(4, 2, Opcode.PREPARE, prepare, FrameFlag.CUSTOM_PAYLOAD);
    const prepared = await client.next(2);
    expect(prepared?.opcode).toBe(Opcode.RESULT);
    const result = decodeResult(prepared!.body, 4);
    if (result.kind !== 'Prepared') throw new Error(`RESULT ${result.kind}`);
    const execute = encodeExecute({ id: result.id, parameters: { consistency: Consistency.ONE, values: [Buffer.from('local')] } }, 4);
    client.send(4, 3, Opcode.EXECUTE, Buffer.concat([payload({ a: 'b' }), execute]), FrameFlag.CUSTOM_PAYLOAD);
    const rows = rowsOf(await client.next(3));
    expect(rows).toHaveLength(1);
    expect(rows[0]!.host_id).not.toBe(REAL_NODE.hostId);
    expect(statementsForwarded(forwarded)).toEqual([]);
  });

  it('a 0x04 frame without a payload map is a protocol error, neither answered nor forwarded', async () => {
    const { client, forwarded } = await proxyWith(openBackend);
    client.send(4, 1, Opcode.STARTUP, startup);
    await client.next(1);
    client.send(4, 2, Opcode.QUERY, query('SELECT * FROM system.local'), FrameFlag.CUSTOM_PAYLOAD);
    expect(errorOf(await client.next(2)).code).toBe(ErrorCode.PROTOCOL_ERROR);
    client.send(4, 3, Opcode.QUERY, query('SELECT * FROM ks.t'), FrameFlag.CUSTOM_PAYLOAD);
    expect(errorOf(await client.next(3)).code).toBe(ErrorCode.PROTOCOL_ERROR);
    expect(statementsForwarded(forwarded)).toEqual([]);
  });

  it('a forwarded statement keeps its payload, bytes untouched', async () => {
    const { client, forwarded } = await proxyWith(openBackend);
    client.send(4, 1, Opcode.STARTUP, startup);
    await client.next(1);
    const body = Buffer.concat([payload({ k: 'v' }), query('SELECT * FROM ks.t')]);
    client.send(4, 2, Opcode.QUERY, body, FrameFlag.CUSTOM_PAYLOAD);
    expect((await client.next(2))?.opcode).toBe(Opcode.RESULT);
    expect(statementsForwarded(forwarded)).toEqual([{ opcode: Opcode.QUERY, flags: FrameFlag.CUSTOM_PAYLOAD, body }]);
  });

  it('v3 has no custom payload: the flag is refused', async () => {
    const { client, forwarded } = await proxyWith(openBackend);
    client.send(3, 1, Opcode.STARTUP, startup);
    await client.next(1);
    client.send(3, 2, Opcode.QUERY, Buffer.concat([payload({}), query('SELECT * FROM system.local', 3)]), FrameFlag.CUSTOM_PAYLOAD);
    expect(errorOf(await client.next(2)).message).toMatch(/custom payload.*v4/);
    expect(statementsForwarded(forwarded)).toEqual([]);
  });
});

/** STARTUP → AUTHENTICATE; AUTH_RESPONSE "secret" → AUTH_SUCCESS, anything else → AUTHENTICATION_ERROR. */
const authBackend: Script = (request) => {
  if (request.opcode === Opcode.STARTUP)
    return { opcode: Opcode.AUTHENTICATE, body: new Writer().writeString('org.apache.cassandra.auth.PasswordAuthenticator').finish() };
  if (request.opcode === Opcode.AUTH_RESPONSE) {
    return request.body.subarray(4).toString() === 'secret'
      ? { opcode: Opcode.AUTH_SUCCESS, body: encodeAuthToken({ token: null }) }
      : { opcode: Opcode.ERROR, body: encodeError({ code: ErrorCode.AUTHENTICATION_ERROR, message: 'bad credentials' }) };
  }
  return openBackend(request);
};

describe('nothing is served before AUTH_SUCCESS when the backend asks for authentication', () => {
  const beforeAuth: [string, number, Buffer][] = [
    ['system.local', Opcode.QUERY, query('SELECT cluster_name, host_id, release_version FROM system.local')],
    ['system.peers', Opcode.QUERY, query('SELECT * FROM system.peers')],
    ['a user table', Opcode.QUERY, query('SELECT * FROM ks.t')],
    ['PREPARE system.peers', Opcode.PREPARE, encodePrepare({ query: 'SELECT * FROM system.peers' }, 4)],
    ['PREPARE a user table', Opcode.PREPARE, encodePrepare({ query: 'SELECT * FROM ks.t' }, 4)],
    ['REGISTER', Opcode.REGISTER, encodeRegister({ eventTypes: ['TOPOLOGY_CHANGE', 'STATUS_CHANGE'] })],
    ['BATCH', Opcode.BATCH, Buffer.from([0, 0, 0, 0, 1, 0])],
  ];

  it.each(beforeAuth)('%s is refused as Cassandra refuses it, and not forwarded', async (_what, opcode, body) => {
    const { client, forwarded } = await proxyWith(authBackend);
    client.send(4, 1, Opcode.STARTUP, startup);
    expect((await client.next(1))?.opcode).toBe(Opcode.AUTHENTICATE);
    client.send(4, 2, opcode, body);
    const error = errorOf(await client.next(2));
    expect(error.code).toBe(ErrorCode.PROTOCOL_ERROR);
    expect(error.message).toMatch(/^Unexpected message \w+, expecting SASL_RESPONSE$/);
    expect(statementsForwarded(forwarded)).toEqual([]);
  });

  it('after a failed AUTH_RESPONSE still nothing; after AUTH_SUCCESS everything, OPTIONS all along', async () => {
    const { client } = await proxyWith(authBackend);
    client.send(4, 1, Opcode.STARTUP, startup);
    await client.next(1);
    client.send(4, 2, Opcode.OPTIONS, Buffer.alloc(0));
    expect((await client.next(2))?.opcode).toBe(Opcode.SUPPORTED);
    client.send(4, 3, Opcode.AUTH_RESPONSE, encodeAuthToken({ token: Buffer.from('wrong') }));
    expect(errorOf(await client.next(3)).code).toBe(ErrorCode.AUTHENTICATION_ERROR);
    client.send(4, 4, Opcode.QUERY, query('SELECT * FROM system.local'));
    expect(errorOf(await client.next(4)).code).toBe(ErrorCode.PROTOCOL_ERROR);
    client.send(4, 5, Opcode.AUTH_RESPONSE, encodeAuthToken({ token: Buffer.from('secret') }));
    expect((await client.next(5))?.opcode).toBe(Opcode.AUTH_SUCCESS);
    expect(rowsOf((client.send(4, 6, Opcode.QUERY, query('SELECT * FROM system.local')), await client.next(6)))).toHaveLength(1);
    client.send(4, 7, Opcode.REGISTER, encodeRegister({ eventTypes: ['STATUS_CHANGE'] }));
    expect((await client.next(7))?.opcode).toBe(Opcode.READY);
  });

  it('a backend that answers READY needs no AUTH_RESPONSE', async () => {
    const { client } = await proxyWith(openBackend);
    client.send(4, 1, Opcode.STARTUP, startup);
    expect((await client.next(1))?.opcode).toBe(Opcode.READY);
    client.send(4, 2, Opcode.QUERY, query('SELECT * FROM system.local'));
    expect(rowsOf(await client.next(2))).toHaveLength(1);
  });
});

describe('protocol edges', () => {
  it.each([1, 2])('a v%i client gets its PROTOCOL_ERROR in the 8-byte v1/v2 header, on its stream', async (version) => {
    const { client, metrics } = await proxyWith(openBackend);
    const replies: Buffer[] = [];
    client.socket.removeAllListeners('data');
    client.socket.on('data', (chunk: Buffer) => replies.push(chunk));
    // v1/v2 header: version, flags, [byte] stream, opcode, [int] length.
    client.socket.write(Buffer.from([version, 0, 7, Opcode.OPTIONS, 0, 0, 0, 0]));
    await new Promise((resolve) => client.socket.once('close', resolve));
    const reply = Buffer.concat(replies);
    expect(reply[0]).toBe(0x80 | version);
    expect(reply[2]).toBe(7);
    expect(reply[3]).toBe(Opcode.ERROR);
    expect(reply.readInt32BE(4)).toBe(reply.length - 8);
    const error = decodeError(reply.subarray(8));
    expect(error).toMatchObject({
      code: ErrorCode.PROTOCOL_ERROR,
      message: expect.stringContaining('Invalid or unsupported protocol version'),
    });
    // Negotiation is not a protocol error: the alerting metric stays at zero.
    const kinds = Object.fromEntries((await metrics.errors.get()).values.map((v) => [v.labels.kind, v.value]));
    expect(kinds).toEqual({ version_negotiation: 1 });
  });

  it('a v6 client is told to step down, counted as version negotiation, not as a protocol error', async () => {
    const { client, metrics } = await proxyWith(openBackend);
    client.send(6, 0, Opcode.OPTIONS, Buffer.alloc(0));
    const reply = await client.next();
    expect(reply?.version).toBe(5);
    expect(errorOf(reply).message).toContain('Invalid or unsupported protocol version (6)');
    const kinds = Object.fromEntries((await metrics.errors.get()).values.map((v) => [v.labels.kind, v.value]));
    expect(kinds).toEqual({ version_negotiation: 1 });
  });

  it('a client that closes after being told to step down is let go at once, not after the close grace', async () => {
    const { client, clients, context } = await proxyWith(openBackend);
    // A grace far beyond the test's timeout: only the client's own FIN can end the connection in time.
    (context.config.connections as { closeGrace: number }).closeGrace = 10 * 60_000;
    while (clients.size === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    const [connection] = [...clients];
    client.send(6, 0, Opcode.OPTIONS, Buffer.alloc(0));
    expect(errorOf(await client.next()).message).toContain('Invalid or unsupported protocol version (6)');
    client.close();
    // The proxy's admission slot is held until this socket closes. A slab-read socket paused after
    // the reply left the FIN unread, and the socket open for the whole grace.
    while (!connection!.socket.destroyed) await new Promise((resolve) => setTimeout(resolve, 20));
  });

  it('v5 ignores the frame compression flag: the request is read as it is, and forwarded without the flag', async () => {
    const { client, forwarded } = await proxyWith(openBackend);
    client.send(5, 1, Opcode.STARTUP, startup);
    expect((await client.next(1))?.opcode).toBe(Opcode.READY);
    client.useSegments(false);
    client.send(5, 2, Opcode.QUERY, query('SELECT key FROM system.local', 5), FrameFlag.COMPRESSION);
    expect(rowsOf(await client.next(2), 5)).toEqual([{ key: 'local' }]);
    client.send(5, 3, Opcode.QUERY, query('SELECT * FROM ks.t', 5), FrameFlag.COMPRESSION);
    expect((await client.next(3))?.opcode).toBe(Opcode.RESULT);
    expect(statementsForwarded(forwarded).map((f) => f.flags)).toEqual([0]);
  });

  it('an unexpected internal error is SERVER_ERROR; a failed backend node stays OVERLOADED (retry elsewhere)', async () => {
    const { client } = await proxyWith((request) => {
      if (request.opcode === Opcode.STARTUP) return { opcode: Opcode.READY };
      const text = request.body.toString('utf8', 4);
      return text.includes('node') ? new BackendConnectionError('connection to 10.0.0.1:9042 is closed') : new TypeError('a bug');
    });
    client.send(4, 1, Opcode.STARTUP, startup);
    await client.next(1);
    client.send(4, 2, Opcode.QUERY, query('SELECT * FROM ks.bug'));
    expect(errorOf(await client.next(2)).code).toBe(ErrorCode.SERVER_ERROR);
    client.send(4, 3, Opcode.QUERY, query('SELECT * FROM ks.node'));
    expect(errorOf(await client.next(3)).code).toBe(ErrorCode.OVERLOADED);
  });
});

describe('system keyspaces and DESCRIBE', () => {
  const describeAnswer = () => {
    const text = { id: DataTypeId.VARCHAR } as const;
    const ownership = types.map(types.varchar, types.list(types.varchar));
    const spec = (name: string, type: DataType) => ({ keyspace: 'system', table: 'describe', name, type });
    return encodeResult(
      {
        kind: 'Rows',
        metadata: {
          columnCount: 4,
          columns: [spec('cluster', text), spec('partitioner', text), spec('snitch', text), spec('range_ownership', ownership)],
        },
        rows: [
          [
            encodeCell(text, 'Real Cluster'),
            encodeCell(text, 'Murmur3Partitioner'),
            encodeCell(text, 'SimpleSnitch'),
            encodeCell(ownership, new Map([[REAL_NODE.token, [`/${REAL_NODE.address}:7000`]]])),
          ],
        ],
      },
      4,
    );
  };

  it('DESCRIBE CLUSTER is forwarded and its range_ownership replaced by the virtual ring', async () => {
    const { client, forwarded } = await proxyWith((request) =>
      request.opcode === Opcode.QUERY ? { opcode: Opcode.RESULT, body: describeAnswer() } : openBackend(request),
    );
    client.send(4, 1, Opcode.STARTUP, startup);
    await client.next(1);
    client.send(4, 2, Opcode.QUERY, query('DESCRIBE CLUSTER'));
    const answer = await client.next(2);
    const [row] = rowsOf(answer);
    expect(row!.cluster).toBe('Real Cluster');
    const ownership = row!.range_ownership as Map<string, string[]>;
    const owners = new Set([...ownership.values()].flat());
    expect(owners).toEqual(new Set(['/127.0.0.50:9042', '/127.0.0.51:9042']));
    expect(answer!.body.includes(Buffer.from(REAL_NODE.token))).toBe(false);
    expect(answer!.body.includes(Buffer.from(REAL_NODE.address))).toBe(false);
    expect(statementsForwarded(forwarded)).toHaveLength(1);
  });

  it('a DESCRIBE CLUSTER answer the proxy cannot rewrite is SERVER_ERROR, never passed on', async () => {
    const truncated = describeAnswer().subarray(0, 60);
    const { client } = await proxyWith((request) =>
      request.opcode === Opcode.QUERY ? { opcode: Opcode.RESULT, body: truncated } : openBackend(request),
    );
    client.send(4, 1, Opcode.STARTUP, startup);
    await client.next(1);
    client.send(4, 2, Opcode.QUERY, query('DESCRIBE CLUSTER'));
    expect(errorOf(await client.next(2)).code).toBe(ErrorCode.SERVER_ERROR);
  });

  it.each([
    ['SELECT * FROM system_views.gossip_info', undefined],
    ['SELECT peer, host_id FROM system.peer_events_v2', undefined],
    ['SELECT * FROM system.size_estimates', undefined],
    ['SELECT JSON * FROM system_traces.sessions', undefined],
    ['SELECT address FROM clients', 'system_views'],
  ])('%s (keyspace %s) is refused with INVALID and never forwarded', async (text, keyspace) => {
    const { client, forwarded } = await proxyWith(openBackend);
    client.send(5, 1, Opcode.STARTUP, startup);
    await client.next(1);
    client.useSegments(false);
    const body = encodeQuery({ query: text, parameters: { consistency: Consistency.ONE, ...(keyspace ? { keyspace } : {}) } }, 5);
    client.send(5, 2, Opcode.QUERY, body);
    const error = errorOf(await client.next(2));
    expect(error.code).toBe(ErrorCode.INVALID);
    expect(error.message).toMatch(/is not served through the proxy/);
    client.send(5, 3, Opcode.PREPARE, encodePrepare({ query: text, ...(keyspace ? { keyspace } : {}) }, 5));
    expect(errorOf(await client.next(3)).code).toBe(ErrorCode.INVALID);
    expect(statementsForwarded(forwarded)).toEqual([]);
  });

  it('schema and user tables are forwarded', async () => {
    const { client, forwarded } = await proxyWith(openBackend);
    client.send(4, 1, Opcode.STARTUP, startup);
    await client.next(1);
    client.send(4, 2, Opcode.QUERY, query('SELECT keyspace_name FROM system_schema.keyspaces'));
    expect((await client.next(2))?.opcode).toBe(Opcode.RESULT);
    client.send(4, 3, Opcode.QUERY, query('DESCRIBE FULL SCHEMA'));
    expect((await client.next(3))?.opcode).toBe(Opcode.RESULT);
    expect(statementsForwarded(forwarded)).toHaveLength(2);
  });
});

describe('EXECUTE of a statement the proxy never saw prepared', () => {
  const id = Buffer.from('00112233445566778899aabbccddeeff', 'hex');
  const preparingBackend: Script = (request) =>
    request.opcode === Opcode.PREPARE
      ? {
          opcode: Opcode.RESULT,
          body: encodeResult(
            { kind: 'Prepared', id, metadata: { columns: [], pkIndexes: [] }, resultMetadata: { columnCount: 0, columns: [] } },
            4,
          ),
        }
      : openBackend(request);
  const execute = encodeExecute({ id, parameters: { consistency: Consistency.ONE } }, 4);

  it('is answered UNPREPARED with its id (the driver then prepares it through the proxy), not forwarded', async () => {
    const { client, forwarded } = await proxyWith(preparingBackend);
    client.send(4, 1, Opcode.STARTUP, startup);
    await client.next(1);
    // The id of a statement the backend may have cached from a direct client: `SELECT * FROM system_views.gossip_info`, say.
    client.send(4, 2, Opcode.EXECUTE, execute);
    const error = errorOf(await client.next(2));
    expect(error.code).toBe(ErrorCode.UNPREPARED);
    expect(error.details).toEqual({ code: ErrorCode.UNPREPARED, id });
    expect(statementsForwarded(forwarded)).toEqual([]);
    client.send(4, 3, Opcode.PREPARE, encodePrepare({ query: 'SELECT * FROM ks.t' }, 4));
    expect((await client.next(3))?.opcode).toBe(Opcode.RESULT);
    client.send(4, 4, Opcode.EXECUTE, execute);
    expect((await client.next(4))?.opcode).toBe(Opcode.RESULT);
    expect(statementsForwarded(forwarded).map((f) => f.opcode)).toEqual([Opcode.PREPARE, Opcode.EXECUTE]);
  });
});

describe('a STARTUP no backend node answered', () => {
  it('leaves the connection new: the client may send STARTUP again', async () => {
    let attempts = 0;
    const { client } = await proxyWith((request) =>
      request.opcode === Opcode.STARTUP && ++attempts === 1
        ? new BackendConnectionError('cannot connect to Cassandra at 10.0.0.1:9042')
        : openBackend(request),
    );
    client.send(4, 1, Opcode.STARTUP, startup);
    const error = errorOf(await client.next(1));
    expect(error.code).toBe(ErrorCode.OVERLOADED);
    // Which node failed is not the client's to know.
    expect(error.message).toBe('proxy: cannot connect to Cassandra at a backend node');
    client.send(4, 2, Opcode.STARTUP, startup);
    expect((await client.next(2))?.opcode).toBe(Opcode.READY);
  });
});
