import { createRequire } from 'node:module';
import { describe, expect, it } from '@jest/globals';
import { decodeCell, encodeCell, type CellValue } from '../../src/protocol/cells.js';
import { DataTypeId, cqlTypeName, readDataType, types, writeDataType, type DataType } from '../../src/protocol/types.js';
import { ProtocolError } from '../../src/protocol/errors.js';
import { Reader } from '../../src/protocol/reader.js';
import { Writer } from '../../src/protocol/writer.js';
import { rowsResult } from '../../src/protocol/rows.js';
import { decodeResult, encodeResult } from '../../src/protocol/result.js';

/** The slice of cassandra-driver's untyped Encoder these tests use to cross-check cell bytes. */
interface DriverEncoder {
  encode(value: unknown, type: unknown): Buffer;
}
interface Driver {
  Encoder: new (version: number, options: object) => DriverEncoder;
  types: {
    dataTypes: Record<string, number>;
    Uuid: { fromString(s: string): unknown };
    TimeUuid: { fromString(s: string): unknown };
    InetAddress: { fromString(s: string): unknown };
    Long: { fromString(s: string): unknown };
  };
}
const driver = createRequire(import.meta.url)('cassandra-driver') as Driver;
const encoder = new driver.Encoder(4, {});
const dt = driver.types.dataTypes;

const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ''), 'hex');

describe('data type options', () => {
  const nested: DataType[] = [
    types.varchar,
    types.set(types.varchar),
    types.map(types.varchar, types.list(types.inet)),
    { id: DataTypeId.CUSTOM, className: 'org.apache.cassandra.db.marshal.DateType' },
    { id: DataTypeId.TUPLE, elements: [types.int, types.uuid] },
    { id: DataTypeId.UDT, keyspace: 'ks', name: 'address', fields: [{ name: 'street', type: types.varchar }] },
  ];

  it('round-trips every shape', () => {
    for (const type of nested) {
      const w = new Writer();
      writeDataType(w, type);
      expect(readDataType(new Reader(w.finish()))).toEqual(type);
    }
  });

  it('encodes map<varchar, list<inet>> as nested option ids', () => {
    const w = new Writer();
    writeDataType(w, types.map(types.varchar, types.list(types.inet)));
    expect(w.finish().toString('hex')).toBe('0021' + '000d' + '0020' + '0010');
  });

  it('names types as CQL spells them', () => {
    expect(nested.map(cqlTypeName)).toEqual([
      'text',
      'set<text>',
      'map<text, list<inet>>',
      "'org.apache.cassandra.db.marshal.DateType'",
      'tuple<int, uuid>',
      'address',
    ]);
  });

  it('refuses unknown ids, truncation and absurd nesting', () => {
    expect(() => readDataType(new Reader(hex('0042')))).toThrow(/Unknown data type option id 0x0042/);
    expect(() => readDataType(new Reader(hex('0021000d')))).toThrow(ProtocolError);
    expect(() => readDataType(new Reader(Buffer.from('0020'.repeat(1000), 'hex')))).toThrow(/nested deeper/);
  });
});

describe('cells', () => {
  const uuid = '550e8400-e29b-41d4-a716-446655440000';
  const timeuuid = 'e7d3a3a0-5c3b-11ee-8c99-0242ac120002';
  const cases: [string, DataType, CellValue, unknown, unknown][] = [
    ['varchar', types.varchar, 'héllo', 'héllo', dt.varchar],
    ['ascii', types.ascii, 'local', 'local', dt.ascii],
    ['int', types.int, -42, -42, dt.int],
    ['bigint', types.bigint, -5n, driver.types.Long.fromString('-5'), dt.bigint],
    ['boolean', types.boolean, true, true, dt.boolean],
    ['uuid', types.uuid, uuid, driver.types.Uuid.fromString(uuid), dt.uuid],
    ['timeuuid', types.timeuuid, timeuuid, driver.types.TimeUuid.fromString(timeuuid), dt.timeuuid],
    ['inet v4', types.inet, '10.0.0.7', driver.types.InetAddress.fromString('10.0.0.7'), dt.inet],
    ['inet v6', types.inet, 'fe80::1', driver.types.InetAddress.fromString('fe80::1'), dt.inet],
    ['timestamp', types.timestamp, new Date(1700000000123), new Date(1700000000123), dt.timestamp],
    ['set<varchar>', types.set(types.varchar), ['a', 'bc'], ['a', 'bc'], { code: dt.set, info: { code: dt.varchar } }],
    ['list<int>', types.list(types.int), [1, 2, 3], [1, 2, 3], { code: dt.list, info: { code: dt.int } }],
    [
      'map<varchar,varchar>',
      types.map(types.varchar, types.varchar),
      new Map([
        ['dc1', '3'],
        ['class', 'NetworkTopologyStrategy'],
      ]),
      { dc1: '3', class: 'NetworkTopologyStrategy' },
      { code: dt.map, info: [{ code: dt.varchar }, { code: dt.varchar }] },
    ],
  ];

  it.each(cases)('%s encodes as cassandra-driver does and decodes back', (_, type, value, driverValue, driverType) => {
    const bytes = encodeCell(type, value);
    expect(bytes?.toString('hex')).toBe(encoder.encode(driverValue, driverType).toString('hex'));
    expect(decodeCell(type, bytes)).toEqual(value);
  });

  it('encodes null as a null cell and reads empty non-text cells as null', () => {
    expect(encodeCell(types.int, null)).toBeNull();
    expect(decodeCell(types.int, null)).toBeNull();
    expect(decodeCell(types.int, Buffer.alloc(0))).toBeNull();
    expect(decodeCell(types.varchar, Buffer.alloc(0))).toBe('');
  });

  it('refuses values of the wrong JS type', () => {
    expect(() => encodeCell(types.int, 'one')).toThrow(/Cannot encode a string as int/);
    expect(() => encodeCell(types.set(types.varchar), 'a')).toThrow(ProtocolError);
    expect(() => encodeCell(types.map(types.varchar, types.varchar), ['a'])).toThrow(ProtocolError);
  });

  it('refuses cells of the wrong size and truncated collections', () => {
    expect(() => decodeCell(types.int, hex('000001'))).toThrow(/int cell has 4 bytes, not 3/);
    expect(() => decodeCell(types.uuid, hex('00'))).toThrow(ProtocolError);
    expect(() => decodeCell(types.inet, hex('0102030405'))).toThrow(ProtocolError);
    const set = encodeCell(types.set(types.varchar), ['abc', 'def']) as Buffer;
    for (let n = 1; n < set.length; n++) {
      expect(() => decodeCell(types.set(types.varchar), set.subarray(0, n))).toThrow(ProtocolError);
    }
  });
});

describe('rowsResult', () => {
  const columns = [
    { keyspace: 'system', table: 'local', name: 'key', type: types.varchar },
    { keyspace: 'system', table: 'local', name: 'tokens', type: types.set(types.varchar) },
  ];

  it('encodes each value with its column type and round-trips through RESULT', () => {
    const result = rowsResult(columns, [['local', ['-9223372036854775808', '0']]]);
    const decoded = decodeResult(encodeResult(result, 4), 4);
    expect(decoded).toEqual(result);
    if (decoded.kind !== 'Rows') throw new Error('not rows');
    expect(decoded.rows[0]?.map((cell, i) => decodeCell((columns[i] as (typeof columns)[number]).type, cell))).toEqual([
      'local',
      ['-9223372036854775808', '0'],
    ]);
  });

  it('omits column specs when the client skips metadata, keeps them when the metadata id changed', () => {
    const skipped = rowsResult(columns, [], { skipMetadata: true });
    expect(skipped).toMatchObject({ metadata: { columnCount: 2 } });
    expect(skipped.kind === 'Rows' && skipped.metadata.columns).toBeUndefined();
    const changed = rowsResult(columns, [], { skipMetadata: true, newMetadataId: Buffer.from('01', 'hex') });
    expect(changed.kind === 'Rows' && changed.metadata.columns).toEqual(columns);
  });

  it('refuses a row of the wrong width', () => {
    expect(() => rowsResult(columns, [['local']])).toThrow(/Row 0 has 1 values for 2 columns/);
  });
});
