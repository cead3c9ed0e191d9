import { createRequire } from 'node:module';
import { describe, expect, it } from '@jest/globals';
import { FrameDecoder, Opcode, encodeFrame, type Frame } from '../../src/protocol/frame.js';
import { decodeMessage, encodeMessage, type Message } from '../../src/protocol/messages.js';
import { Consistency } from '../../src/protocol/consistency.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { types, type DataType } from '../../src/protocol/types.js';
import { encodeCell } from '../../src/protocol/cells.js';

/**
 * Interoperability with a real client: frames cassandra-driver writes are decoded here, and frames
 * encoded here are read by cassandra-driver's own frame reader. The driver is untyped inside, so the
 * slices used are described by the interfaces below.
 */
const require = createRequire(import.meta.url);
interface Writable {
  write(encoder: unknown, stream: number): Buffer;
}
type RequestClass = new (...args: unknown[]) => Writable;
const requests = require('cassandra-driver/lib/requests') as Record<string, RequestClass>;
const { Encoder, types: driverTypes } = require('cassandra-driver') as {
  Encoder: new (version: number, options: object) => unknown;
  types: { FrameHeader: { fromBuffer(b: Buffer): unknown }; Long: { fromString(s: string): unknown } };
};
interface DriverReader {
  readInt(): number;
  readBytes(): Buffer | null;
  readMetadata(kind: number): {
    resultId?: Buffer;
    partitionKeys?: number[];
    pageState?: Buffer;
    keyspace?: string;
    table?: string;
    columns: { name: string; type: { code: number; info: unknown } }[];
  };
  readShortBytes(): Buffer;
  readError(): { code: number; message: string; required?: number; alive?: number; queryId?: Buffer };
  readEvent(): Record<string, unknown>;
}
const { FrameReader } = require('cassandra-driver/lib/readers') as {
  FrameReader: new (header: unknown, body: Buffer) => DriverReader;
};

/** Options the driver's request writers consult, with the values under test. */
const options = (o: Partial<Record<string, unknown>> = {}) => ({
  getOrGenerateTimestamp: () => o.timestamp ?? null,
  getConsistency: () => o.consistency,
  getHints: () => o.hints,
  isQueryTracing: () => false,
  getCustomPayload: () => undefined,
  getFetchSize: () => o.fetchSize,
  getPageState: () => o.pageState,
  getSerialConsistency: () => o.serialConsistency,
  getKeyspace: () => undefined,
  isBatchCounter: () => false,
  isBatchLogged: () => false,
});

function decodeDriverFrame(bytes: Buffer): Frame {
  // Split at every byte on the way: a real socket would.
  for (let at = 0; at < bytes.length; at += 5) {
    const d = new FrameDecoder();
    expect([...d.push(bytes.subarray(0, at)), ...d.push(bytes.subarray(at))]).toHaveLength(1);
  }
  const [frame] = new FrameDecoder().push(bytes);
  if (!frame) throw new Error('no frame');
  return frame;
}

describe.each([3, 4])('cassandra-driver requests in v%i decode here', (version) => {
  const encoder = new Encoder(version, {});
  const decode = (r: Writable) => {
    const frame = decodeDriverFrame(r.write(encoder, 17));
    expect(frame).toMatchObject({ version, response: false, stream: 17 });
    return decodeMessage(frame.opcode, frame.body, version);
  };

  it('STARTUP and REGISTER', () => {
    expect(decode(new requests.StartupRequest!({}))).toMatchObject({ opcode: Opcode.STARTUP });
    const startup = decode(new requests.StartupRequest!({})) as Extract<Message, { opcode: 1 }>;
    expect(startup.options.get('CQL_VERSION')).toBe('3.0.0');
    expect(decode(new requests.RegisterRequest!(['TOPOLOGY_CHANGE', 'STATUS_CHANGE']))).toEqual({
      opcode: Opcode.REGISTER,
      eventTypes: ['TOPOLOGY_CHANGE', 'STATUS_CHANGE'],
    });
  });

  it('QUERY with values, page size, paging state, serial consistency and timestamp', () => {
    const q = new requests.QueryRequest!(
      'SELECT * FROM system.peers WHERE peer = ?',
      ['10.0.0.1', 7],
      options({
        consistency: Consistency.LOCAL_ONE,
        hints: ['inet', 'int'],
        fetchSize: 100,
        pageState: Buffer.from('0102', 'hex'),
        serialConsistency: Consistency.LOCAL_SERIAL,
        timestamp: driverTypes.Long.fromString('1700000000000000'),
      }),
    );
    expect(decode(q)).toEqual({
      opcode: Opcode.QUERY,
      query: 'SELECT * FROM system.peers WHERE peer = ?',
      parameters: {
        consistency: Consistency.LOCAL_ONE,
        values: [encodeCell(types.inet, '10.0.0.1'), encodeCell(types.int, 7)],
        pageSize: 100,
        pagingState: Buffer.from('0102', 'hex'),
        serialConsistency: Consistency.LOCAL_SERIAL,
        timestamp: 1700000000000000n,
      },
    });
  });

  it('PREPARE and EXECUTE', () => {
    expect(decode(new requests.PrepareRequest!('SELECT * FROM system.local'))).toEqual({
      opcode: Opcode.PREPARE,
      query: 'SELECT * FROM system.local',
    });
    const id = Buffer.from('00112233445566778899aabbccddeeff', 'hex');
    const meta = { columns: [{ type: { code: 0x0d } }] };
    const e = new requests.ExecuteRequest!('q', id, ['local'], options({ consistency: Consistency.ONE }), meta);
    expect(decode(e)).toEqual({
      opcode: Opcode.EXECUTE,
      id,
      parameters: { consistency: Consistency.ONE, values: [Buffer.from('local')] },
    });
  });

  it('BATCH, down to its prepared ids', () => {
    const id = Buffer.from('abcd', 'hex');
    const b = new requests.BatchRequest!(
      [
        { query: 'INSERT INTO t (k) VALUES (?)', params: [1], queryId: id, meta: { columns: [{ type: { code: 0x09 } }] } },
        { query: 'DELETE FROM t WHERE k = 2', params: [] },
      ],
      options({ consistency: Consistency.QUORUM }),
    );
    const m = decode(b);
    expect(m).toMatchObject({
      opcode: Opcode.BATCH,
      type: 1,
      consistency: Consistency.QUORUM,
      statements: [
        { kind: 'prepared', id, values: [encodeCell(types.int, 1)] },
        { kind: 'query', query: 'DELETE FROM t WHERE k = 2', values: [] },
      ],
    });
  });
});

describe.each([3, 4])('responses encoded here in v%i are read by cassandra-driver', (version) => {
  const read = (m: Message) => {
    const bytes = encodeFrame({ version, response: true, flags: 0, stream: 0, opcode: m.opcode, body: encodeMessage(m, version) });
    return new FrameReader(driverTypes.FrameHeader.fromBuffer(bytes), bytes.subarray(9));
  };
  const column = (name: string, type: DataType = types.varchar) => ({ keyspace: 'system', table: 'local', name, type });

  it('RESULT Rows: metadata and cells', () => {
    const r = read({
      opcode: Opcode.RESULT,
      result: {
        kind: 'Rows',
        metadata: {
          columnCount: 2,
          columns: [column('key'), column('tokens', types.set(types.varchar))],
          pagingState: Buffer.from('09', 'hex'),
        },
        rows: [[encodeCell(types.varchar, 'local'), encodeCell(types.set(types.varchar), ['-1', '1'])]],
      },
    });
    expect(r.readInt()).toBe(2);
    const meta = r.readMetadata(2);
    expect(meta).toMatchObject({ keyspace: 'system', table: 'local', pageState: Buffer.from('09', 'hex') });
    expect(meta.columns.map((c) => [c.name, c.type.code])).toEqual([
      ['key', 0x0d],
      ['tokens', 0x22],
    ]);
    expect(r.readInt()).toBe(1);
    expect(r.readBytes()?.toString()).toBe('local');
  });

  it('RESULT Prepared: id, pk indexes from v4, bind and result metadata', () => {
    const r = read({
      opcode: Opcode.RESULT,
      result: {
        kind: 'Prepared',
        id: Buffer.from('beef', 'hex'),
        metadata: { columns: [column('key')], ...(version >= 4 ? { pkIndexes: [0] } : {}) },
        resultMetadata: { columnCount: 1, columns: [column('host_id', types.uuid)] },
      },
    });
    expect(r.readInt()).toBe(4);
    expect(r.readShortBytes()).toEqual(Buffer.from('beef', 'hex'));
    const bind = r.readMetadata(4);
    expect(bind.columns.map((c) => c.name)).toEqual(['key']);
    if (version >= 4) expect(bind.partitionKeys).toEqual([0]);
    expect(r.readMetadata(2).columns.map((c) => [c.name, c.type.code])).toEqual([['host_id', 0x0c]]);
  });

  it('ERROR with UNAVAILABLE and UNPREPARED details', () => {
    expect(
      read({
        opcode: Opcode.ERROR,
        code: ErrorCode.UNAVAILABLE,
        message: 'x',
        details: { code: ErrorCode.UNAVAILABLE, consistency: Consistency.QUORUM, required: 2, alive: 1 },
      }).readError(),
    ).toMatchObject({ code: ErrorCode.UNAVAILABLE, required: 2, alive: 1 });
    expect(
      read({
        opcode: Opcode.ERROR,
        code: ErrorCode.UNPREPARED,
        message: 'x',
        details: { code: ErrorCode.UNPREPARED, id: Buffer.from('ab', 'hex') },
      }).readError(),
    ).toMatchObject({ code: ErrorCode.UNPREPARED, queryId: Buffer.from('ab', 'hex') });
  });

  it('EVENTs', () => {
    const topology = read({
      opcode: Opcode.EVENT,
      event: { type: 'TOPOLOGY_CHANGE', change: 'NEW_NODE', address: { address: '10.0.0.9', port: 9042 } },
    }).readEvent();
    expect(topology).toMatchObject({ eventType: 'TOPOLOGY_CHANGE', added: true });
    const inet = topology.inet as { address: { toString(): string }; port: number };
    expect([inet.address.toString(), inet.port]).toEqual(['10.0.0.9', 9042]);
    const status = read({
      opcode: Opcode.EVENT,
      event: { type: 'STATUS_CHANGE', change: 'DOWN', address: { address: '10.0.0.9', port: 9042 } },
    }).readEvent();
    expect(status).toMatchObject({ eventType: 'STATUS_CHANGE', up: false });
    const schema = read({
      opcode: Opcode.EVENT,
      event: { type: 'SCHEMA_CHANGE', change: 'UPDATED', target: 'TABLE', keyspace: 'ks', name: 't' },
    }).readEvent();
    expect(schema).toMatchObject({ eventType: 'SCHEMA_CHANGE', schemaChangeType: 'UPDATED', keyspace: 'ks', table: 't' });
  });
});
