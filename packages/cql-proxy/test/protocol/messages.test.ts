import { describe, expect, it } from '@jest/globals';
import { decodeMessage, encodeMessage, type Message } from '../../src/protocol/messages.js';
import { Opcode, FrameFlag, type Frame } from '../../src/protocol/frame.js';
import { ErrorCode, ProtocolError } from '../../src/protocol/errors.js';
import { Consistency } from '../../src/protocol/consistency.js';
import { UNSET } from '../../src/protocol/reader.js';
import { DataTypeId, types, type DataType } from '../../src/protocol/types.js';
import { joinBody, openFrame, sealFrame, splitBody } from '../../src/protocol/envelope.js';
import { lz4, snappy } from '../../src/protocol/compression.js';
import { decodeEvent, encodeEvent } from '../../src/protocol/event.js';
import { decodeQuery, decodeRegister, encodeRegister } from '../../src/protocol/requests.js';

const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ''), 'hex');
const str = (s: string) => Buffer.concat([Buffer.from([0, s.length]), Buffer.from(s)]);

const column = (name: string, type: DataType = types.varchar, table = 'local') => ({ keyspace: 'system', table, name, type });

/** Messages valid in every version 3–5 (per-version extras are added below). */
const common: Message[] = [
  {
    opcode: Opcode.STARTUP,
    options: new Map([
      ['CQL_VERSION', '3.0.0'],
      ['COMPRESSION', 'lz4'],
    ]),
  },
  { opcode: Opcode.OPTIONS },
  { opcode: Opcode.READY },
  {
    opcode: Opcode.SUPPORTED,
    options: new Map([
      ['CQL_VERSION', ['3.4.7']],
      ['COMPRESSION', ['lz4', 'snappy']],
    ]),
  },
  { opcode: Opcode.AUTHENTICATE, authenticator: 'org.apache.cassandra.auth.PasswordAuthenticator' },
  { opcode: Opcode.AUTH_RESPONSE, token: Buffer.from('\0cassandra\0cassandra') },
  { opcode: Opcode.AUTH_CHALLENGE, token: null },
  { opcode: Opcode.AUTH_SUCCESS, token: Buffer.alloc(0) },
  { opcode: Opcode.REGISTER, eventTypes: ['TOPOLOGY_CHANGE', 'STATUS_CHANGE', 'SCHEMA_CHANGE'] },
  { opcode: Opcode.ERROR, code: ErrorCode.PROTOCOL_ERROR, message: 'Invalid or unsupported protocol version (66)' },
  { opcode: Opcode.ERROR, code: ErrorCode.OVERLOADED, message: 'shutting down, retry on next host' },
  { opcode: Opcode.ERROR, code: ErrorCode.INVALID, message: 'Undefined column name foo' },
  { opcode: Opcode.ERROR, code: ErrorCode.UNPREPARED, message: 'unknown', details: { code: ErrorCode.UNPREPARED, id: hex('cafe') } },
  {
    opcode: Opcode.ERROR,
    code: ErrorCode.UNAVAILABLE,
    message: 'Cannot achieve consistency level QUORUM',
    details: { code: ErrorCode.UNAVAILABLE, consistency: Consistency.QUORUM, required: 2, alive: 1 },
  },
  {
    opcode: Opcode.ERROR,
    code: ErrorCode.READ_TIMEOUT,
    message: 'timeout',
    details: { code: ErrorCode.READ_TIMEOUT, consistency: Consistency.ONE, received: 0, blockFor: 1, dataPresent: false },
  },
  {
    opcode: Opcode.ERROR,
    code: ErrorCode.WRITE_TIMEOUT,
    message: 'timeout',
    details: { code: ErrorCode.WRITE_TIMEOUT, consistency: Consistency.ONE, received: 0, blockFor: 1, writeType: 'CAS' },
    trailer: hex('0003'), // v5 <contentions>, kept as bytes
  },
  { opcode: Opcode.ERROR, code: ErrorCode.READ_FAILURE, message: 'failed', trailer: hex('0001 00000000 00000001 00000001 00') },
  { opcode: Opcode.EVENT, event: { type: 'TOPOLOGY_CHANGE', change: 'NEW_NODE', address: { address: '10.0.0.2', port: 9042 } } },
  { opcode: Opcode.EVENT, event: { type: 'STATUS_CHANGE', change: 'DOWN', address: { address: 'fd00::2', port: 9043 } } },
  { opcode: Opcode.EVENT, event: { type: 'SCHEMA_CHANGE', change: 'CREATED', target: 'KEYSPACE', keyspace: 'ks' } },
  { opcode: Opcode.EVENT, event: { type: 'SCHEMA_CHANGE', change: 'UPDATED', target: 'TABLE', keyspace: 'ks', name: 't' } },
  { opcode: Opcode.EVENT, event: { type: 'SCHEMA_CHANGE', change: 'DROPPED', target: 'TYPE', keyspace: 'ks', name: 'udt' } },
  { opcode: Opcode.QUERY, query: 'SELECT * FROM system.local', parameters: { consistency: Consistency.ONE } },
  {
    opcode: Opcode.QUERY,
    query: 'SELECT * FROM system.peers WHERE peer = ?',
    parameters: {
      consistency: Consistency.LOCAL_QUORUM,
      values: [hex('0a000002'), null, UNSET],
      skipMetadata: true,
      pageSize: 5000,
      pagingState: hex('0102'),
      serialConsistency: Consistency.LOCAL_SERIAL,
      timestamp: 1700000000000000n,
    },
  },
  {
    opcode: Opcode.QUERY,
    query: 'SELECT * FROM system.peers_v2 WHERE peer = :address',
    parameters: { consistency: Consistency.ONE, values: [hex('0a000002')], valueNames: ['address'] },
  },
  { opcode: Opcode.PREPARE, query: 'SELECT * FROM system.local WHERE key = ?' },
  {
    opcode: Opcode.BATCH,
    type: 1,
    statements: [
      { kind: 'query', query: 'INSERT INTO t (k) VALUES (?)', values: [hex('00000001')] },
      { kind: 'prepared', id: hex('abcdef'), values: [null, UNSET] },
    ],
    consistency: Consistency.QUORUM,
    serialConsistency: Consistency.SERIAL,
    timestamp: 42n,
  },
  { opcode: Opcode.RESULT, result: { kind: 'Void' } },
  { opcode: Opcode.RESULT, result: { kind: 'Set_keyspace', keyspace: 'ks' } },
  {
    opcode: Opcode.RESULT,
    result: { kind: 'Schema_change', change: { change: 'CREATED', target: 'TABLE', keyspace: 'ks', name: 't' } },
  },
  {
    opcode: Opcode.RESULT,
    result: {
      kind: 'Rows',
      metadata: {
        columnCount: 5,
        columns: [
          column('key'),
          column('tokens', types.set(types.varchar)),
          column('options', types.map(types.varchar, types.varchar)),
          column('udt', { id: DataTypeId.UDT, keyspace: 'ks', name: 'a', fields: [{ name: 'f', type: types.int }] }),
          column('tuple', { id: DataTypeId.TUPLE, elements: [types.inet, types.list(types.uuid)] }),
        ],
      },
      rows: [
        [Buffer.from('local'), null, hex('00000000'), hex(''), hex('00000001')],
        [Buffer.from('x'), hex('00000000'), null, null, null],
      ],
    },
  },
  {
    opcode: Opcode.RESULT,
    result: {
      kind: 'Rows',
      metadata: { columnCount: 2, columns: [column('peer', types.inet, 'peers'), column('key')], pagingState: hex('aa') },
      rows: [],
    },
  },
  { opcode: Opcode.RESULT, result: { kind: 'Rows', metadata: { columnCount: 1 }, rows: [[hex('01')]] } },
];

const execute = (v: number): Message => ({
  opcode: Opcode.EXECUTE,
  id: hex('0123456789abcdef0123456789abcdef'),
  ...(v >= 5 ? { resultMetadataId: hex('feedface') } : {}),
  parameters: { consistency: Consistency.ONE, values: [hex('00')], pageSize: 100 },
});

const prepared = (v: number): Message => ({
  opcode: Opcode.RESULT,
  result: {
    kind: 'Prepared',
    id: hex('0123'),
    ...(v >= 5 ? { resultMetadataId: hex('4567') } : {}),
    metadata: { columns: [column('key')], ...(v >= 4 ? { pkIndexes: [0] } : {}) },
    resultMetadata: { columnCount: 2, columns: [column('key'), column('host_id', types.uuid)] },
  },
});

const v4Only: Message[] = [
  {
    opcode: Opcode.EVENT,
    event: { type: 'SCHEMA_CHANGE', change: 'CREATED', target: 'FUNCTION', keyspace: 'ks', name: 'f', argumentTypes: ['int', 'text'] },
  },
];

const v5Only: Message[] = [
  { opcode: Opcode.PREPARE, query: 'SELECT * FROM local', keyspace: 'system' },
  {
    opcode: Opcode.QUERY,
    query: 'SELECT * FROM local',
    parameters: { consistency: Consistency.ONE, keyspace: 'system', nowInSeconds: 1700000000 },
  },
  {
    opcode: Opcode.RESULT,
    result: { kind: 'Rows', metadata: { columnCount: 1, columns: [column('key')], newMetadataId: hex('99') }, rows: [] },
  },
  {
    opcode: Opcode.BATCH,
    type: 0,
    statements: [],
    consistency: Consistency.ONE,
    keyspace: 'ks',
    nowInSeconds: 7,
  },
];

const forVersion = (v: number) => [...common, execute(v), prepared(v), ...(v >= 4 ? v4Only : []), ...(v >= 5 ? v5Only : [])];

describe.each([3, 4, 5])('messages in protocol v%i', (version) => {
  const messages = forVersion(version);

  it('round-trip', () => {
    for (const m of messages) expect(decodeMessage(m.opcode, encodeMessage(m, version), version)).toEqual(m);
  });

  it('throw ProtocolError when truncated at any byte', () => {
    for (const m of messages) {
      const body = encodeMessage(m, version);
      for (let n = 0; n < body.length; n++) {
        let decoded: Message | undefined;
        try {
          decoded = decodeMessage(m.opcode, body.subarray(0, n), version);
        } catch (e) {
          expect(ProtocolError.is(e)).toBe(true);
          continue;
        }
        // A prefix may itself be a valid shorter message (trailing optional parts); it must not equal the original.
        expect(decoded).not.toEqual(m);
      }
    }
  });

  it('throw only ProtocolError on garbage', () => {
    let seed = version;
    const random = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) >>> 16) & 0xff;
    for (const m of messages) {
      for (let i = 0; i < 50; i++) {
        const body = Buffer.from(encodeMessage(m, version));
        for (let k = 0; k < 3 && body.length > 0; k++) body[random() % body.length] = random();
        try {
          decodeMessage(m.opcode, body, version);
        } catch (e) {
          if (!ProtocolError.is(e)) throw e;
        }
      }
    }
  });
});

describe('spec layouts', () => {
  it('STARTUP is a [string map]', () => {
    const body = encodeMessage({ opcode: Opcode.STARTUP, options: new Map([['CQL_VERSION', '3.0.0']]) }, 4);
    expect(body).toEqual(Buffer.concat([hex('0001'), str('CQL_VERSION'), str('3.0.0')]));
  });

  it('QUERY flags are a [byte] before v5 and an [int] from v5', () => {
    const q: Message = { opcode: Opcode.QUERY, query: 'q', parameters: { consistency: Consistency.ONE, pageSize: 10 } };
    expect(encodeMessage(q, 4).toString('hex')).toBe('00000001' + '71' + '0001' + '04' + '0000000a');
    expect(encodeMessage(q, 5).toString('hex')).toBe('00000001' + '71' + '0001' + '00000004' + '0000000a');
  });

  it('EXECUTE carries the result metadata id only from v5', () => {
    const body4 = encodeMessage(execute(4), 4);
    const body5 = encodeMessage(execute(5), 5);
    expect(body4.subarray(0, 18).toString('hex')).toBe('0010' + '0123456789abcdef0123456789abcdef');
    expect(body5.subarray(18, 24).toString('hex')).toBe('0004' + 'feedface');
  });

  it('a Prepared result has pk indexes from v4', () => {
    const v3 = encodeMessage(prepared(3), 3);
    const v4 = encodeMessage(prepared(4), 4);
    // kind, id, then flags (global), columns_count; v4 adds pk_count=1 and pk_index 0.
    expect(v3.subarray(0, 16).toString('hex')).toBe('00000004' + '00020123' + '00000001' + '00000001');
    expect(v4.subarray(16, 22).toString('hex')).toBe('00000001' + '0000');
  });

  it('a TOPOLOGY_CHANGE carries an [inet]', () => {
    const e = encodeEvent({ type: 'TOPOLOGY_CHANGE', change: 'REMOVED_NODE', address: { address: '127.0.0.2', port: 9042 } }, 4);
    expect(e).toEqual(Buffer.concat([str('TOPOLOGY_CHANGE'), str('REMOVED_NODE'), hex('04 7f000002 00002352')]));
    expect(decodeEvent(e)).toEqual({ type: 'TOPOLOGY_CHANGE', change: 'REMOVED_NODE', address: { address: '127.0.0.2', port: 9042 } });
  });

  it.each(['FUNCTION', 'AGGREGATE'] as const)(
    'a %s schema change reaches a v3 client as its keyspace UPDATED, as Cassandra sends it',
    (target) => {
      const change = { type: 'SCHEMA_CHANGE', change: 'CREATED', target, keyspace: 'ks', name: 'f', argumentTypes: ['int'] } as const;
      expect(encodeEvent(change, 3)).toEqual(Buffer.concat([str('SCHEMA_CHANGE'), str('UPDATED'), str('KEYSPACE'), str('ks')]));
      expect(decodeEvent(encodeEvent(change, 3))).toEqual({ type: 'SCHEMA_CHANGE', change: 'UPDATED', target: 'KEYSPACE', keyspace: 'ks' });
      expect(decodeEvent(encodeEvent(change, 4))).toEqual(change);
    },
  );

  it('refuses unknown opcodes, result kinds, events and query flags', () => {
    expect(() => decodeMessage(0x04, Buffer.alloc(0), 4)).toThrow(/Unknown opcode 0x04/);
    expect(() => decodeMessage(Opcode.RESULT, hex('00000009'), 4)).toThrow(/Unknown RESULT kind 9/);
    expect(() => decodeMessage(Opcode.EVENT, str('NOPE'), 4)).toThrow(/Unknown event type/);
    expect(() => decodeQuery(hex('00000001 71 0001 80'), 4)).toThrow(/Unknown query flags 0x80/);
    expect(() => decodeMessage(Opcode.RESULT, hex('00000002 00000000 00000000 7fffffff'), 4)).toThrow(/rows without columns/);
  });
});

describe('body extras', () => {
  const message = encodeMessage({ opcode: Opcode.RESULT, result: { kind: 'Void' } }, 4);
  const frame = (flags: number, body: Buffer, response = true): Frame => ({
    version: 4,
    response,
    flags,
    stream: 1,
    opcode: Opcode.RESULT,
    body,
  });

  it('splits tracing id, warnings and custom payload off a response and joins them back', () => {
    const extras = {
      tracingId: '550e8400-e29b-41d4-a716-446655440000',
      warnings: ['Aggregation query used without partition key'],
      customPayload: new Map([['k', hex('01')]]),
    };
    const joined = joinBody(extras, message, true);
    expect(joined.flags).toBe(FrameFlag.TRACING | FrameFlag.WARNING | FrameFlag.CUSTOM_PAYLOAD);
    expect(splitBody(frame(joined.flags, joined.body))).toEqual({ extras, message });
  });

  it('leaves a request body alone for the tracing flag, which only asks for tracing', () => {
    expect(splitBody(frame(FrameFlag.TRACING, message, false))).toEqual({ extras: {}, message });
  });

  it('throws ProtocolError on a truncated prefix', () => {
    expect(() => splitBody(frame(FrameFlag.TRACING, hex('0102')))).toThrow(ProtocolError);
  });
});

describe('openFrame / sealFrame', () => {
  const message = encodeMessage(
    { opcode: Opcode.QUERY, query: 'SELECT * FROM system.local '.repeat(10), parameters: { consistency: 1 } },
    4,
  );
  const header = { version: 4, response: false, stream: 3, opcode: Opcode.QUERY } as const;

  it.each([lz4, snappy])('compresses v3/v4 bodies with $name and opens them again', (compression) => {
    const frame = sealFrame(header, { customPayload: new Map([['k', null]]) }, message, compression);
    expect(frame.flags & FrameFlag.COMPRESSION).toBe(FrameFlag.COMPRESSION);
    expect(frame.body.length).toBeLessThan(message.length);
    expect(openFrame(frame, compression)).toEqual({ extras: { customPayload: new Map([['k', null]]) }, message });
  });

  it('leaves small bodies and v5 frames uncompressed', () => {
    expect(sealFrame(header, {}, Buffer.from('x'), lz4).flags).toBe(0);
    expect(sealFrame({ ...header, version: 5 }, {}, message, lz4).body).toBe(message);
  });

  it('refuses a compressed frame when nothing was negotiated, and a bomb past the limit', () => {
    const frame = sealFrame(header, {}, message, lz4);
    expect(() => openFrame(frame)).toThrow(/no compression was negotiated/);
    expect(() => openFrame(frame, lz4, 100)).toThrow(ProtocolError);
  });
});

it('refuses ERROR details that belong to another code', () => {
  const m: Message = {
    opcode: Opcode.ERROR,
    code: ErrorCode.INVALID,
    message: 'x',
    details: { code: ErrorCode.UNPREPARED, id: hex('01') },
  };
  expect(() => encodeMessage(m, 4)).toThrow(/with details of 0x2500/);
});

describe('REGISTER', () => {
  it('takes the event types without regard to case, in their canonical names, once each', () => {
    const body = encodeRegister({ eventTypes: ['schema_change', 'SCHEMA_CHANGE', 'Topology_Change'] });
    expect(decodeRegister(body).eventTypes).toEqual(['SCHEMA_CHANGE', 'TOPOLOGY_CHANGE']);
  });

  it('refuses an event type Cassandra does not have, as Cassandra does', () => {
    const body = encodeRegister({ eventTypes: ['STATUS_CHANGE', 'x'.repeat(1000)] });
    expect(() => decodeRegister(body)).toThrow(ProtocolError);
    expect(() => decodeRegister(body)).toThrow(/^Invalid value 'x{64}' for Type; REGISTER accepts TOPOLOGY_CHANGE/);
  });
});
