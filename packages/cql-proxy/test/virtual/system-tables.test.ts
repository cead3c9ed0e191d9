import { describe, expect, it } from '@jest/globals';
import { decodeCell, encodeCell, type CellValue } from '../../src/protocol/cells.js';
import { UNSET } from '../../src/protocol/reader.js';
import { cqlTypeName, DataTypeId, types } from '../../src/protocol/types.js';
import { toJson } from '../../src/virtual/system-functions.js';
import { timeUuidMillis } from '../../src/virtual/timeuuid.js';
import { deriveMembership } from '../../src/virtual/membership.js';
import { parseSystemQuery } from '../../src/virtual/system-query.js';
import { PARTITIONER, type BackendLocalRow } from '../../src/virtual/system-rows.js';
import { preparedShape, selectSystemTable, toRowsResult, type BindValues, type SelectContext } from '../../src/virtual/system-select.js';
import { systemSchemas, tableSchema } from '../../src/virtual/system-tables.js';
import { advanceView } from '../../src/virtual/view.js';
import { endpoint, heartbeat } from './fixtures.js';

const SCHEMA_VERSION = '8c3d1a4e-2b1f-3c5d-9e7a-0f1e2d3c4b5a';
const backendLocal: BackendLocalRow = {
  key: 'local',
  release_version: '5.0.2',
  cql_version: '3.4.7',
  cluster_name: 'Test Cluster',
  native_protocol_version: '5',
  schema_version: SCHEMA_VERSION,
  data_center: 'datacenter1',
  rack: 'rack1',
  partitioner: PARTITIONER,
  broadcast_address: '172.17.0.2',
  listen_address: '172.17.0.2',
  rpc_address: '172.17.0.2',
  host_id: '11111111-1111-4111-8111-111111111111',
  tokens: ['-42'],
  dse_version: '6.8.50',
  workload: 'Cassandra',
};

const members = deriveMembership(
  {
    self: { id: 'proxy-b', nativePort: 9043 },
    endpoints: [
      endpoint('proxy-c', '10.0.0.3', { port: 9044 }),
      endpoint('proxy-a', '10.0.0.1'),
      endpoint('proxy-b', '10.0.0.2', { port: 9043 }),
    ],
    heartbeats: [heartbeat('proxy-a', { payload: { releaseVersion: '5.0.3' } }), heartbeat('proxy-b'), heartbeat('proxy-c')],
  },
  { clusterName: 'Test Cluster', defaultDc: 'datacenter1' },
);
const ctx: SelectContext = {
  view: advanceView(undefined, members),
  backendLocal,
  schemas: systemSchemas(),
  localAddress: '127.0.0.1',
  gossipGeneration: 1_700_000_000,
};

function select(cql: string, bind?: BindValues, context: SelectContext = ctx) {
  const parsed = parseSystemQuery(cql);
  if (!parsed.ok) throw new Error(parsed.message);
  return selectSystemTable(parsed.query, context, bind);
}
function rows(cql: string, bind?: BindValues, context?: SelectContext) {
  const r = select(cql, bind, context);
  if (!r.ok) throw new Error(r.message);
  return { names: r.columns.map((c) => c.name), rows: r.rows, result: r };
}
function refusal(cql: string, bind?: BindValues, context?: SelectContext): string {
  const r = select(cql, bind, context);
  if (r.ok) throw new Error(`expected ${cql} to be refused`);
  return r.message;
}
const inet = (a: string) => encodeCell(types.inet, a);
const int = (n: number) => encodeCell(types.int, n);
const text = (s: string) => encodeCell(types.varchar, s);
const asRecords = (r: { names: string[]; rows: readonly (readonly CellValue[])[] }) =>
  r.rows.map((row) => Object.fromEntries(r.names.map((n, i) => [n, row[i]])));

describe('schemas', () => {
  it("are Cassandra 5.0's by default, in SELECT * order", () => {
    const s = systemSchemas();
    expect(s.local.columns.map((c) => c.name)).toEqual([
      'key',
      'bootstrapped',
      'broadcast_address',
      'broadcast_port',
      'cluster_name',
      'cql_version',
      'data_center',
      'gossip_generation',
      'host_id',
      'listen_address',
      'listen_port',
      'native_protocol_version',
      'partitioner',
      'rack',
      'release_version',
      'rpc_address',
      'rpc_port',
      'schema_version',
      'tokens',
      'truncated_at',
    ]);
    expect(s.peers.columns.map((c) => c.name)).toEqual([
      'peer',
      'data_center',
      'host_id',
      'preferred_ip',
      'rack',
      'release_version',
      'rpc_address',
      'schema_version',
      'tokens',
    ]);
    expect(s.peers_v2?.columns.map((c) => c.name)).toEqual([
      'peer',
      'peer_port',
      'data_center',
      'host_id',
      'native_address',
      'native_port',
      'preferred_ip',
      'preferred_port',
      'rack',
      'release_version',
      'schema_version',
      'tokens',
    ]);
    expect(s.local.columns.find((c) => c.name === 'tokens')?.type).toEqual(types.set(types.varchar));
  });

  it("take the backend's columns and types when given", () => {
    const backend = [
      { name: 'key', type: types.varchar },
      { name: 'data_center', type: types.varchar },
      { name: 'dse_version', type: types.varchar },
      { name: 'host_id', type: types.uuid },
      { name: 'native_transport_address', type: types.inet },
      { name: 'native_transport_port', type: types.int },
      { name: 'storage_port', type: types.int },
      { name: 'rpc_address', type: types.inet },
      { name: 'workload', type: types.varchar },
    ];
    const context = { ...ctx, schemas: systemSchemas({ local: backend }) };
    const r = rows('SELECT * FROM system.local', undefined, context);
    expect(r.names).toEqual(backend.map((c) => c.name));
    expect(asRecords(r)[0]).toEqual({
      key: 'local',
      data_center: 'datacenter1',
      dse_version: '6.8.50',
      host_id: members.members[1]?.hostId,
      native_transport_address: '10.0.0.2',
      native_transport_port: 9043,
      storage_port: null,
      rpc_address: '10.0.0.2',
      workload: 'Cassandra',
    });
  });

  it('answer "unconfigured table" for peers_v2 on an old backend or when switched off', () => {
    for (const schemas of [systemSchemas({ peers_v2: null }), systemSchemas({ servePeersV2: false })]) {
      expect(refusal('SELECT * FROM system.peers_v2', undefined, { ...ctx, schemas })).toBe('unconfigured table peers_v2');
    }
  });
});

describe('system.local', () => {
  it("answers cassandra-driver's SELECT * FROM system.local WHERE key='local' for the receiving instance", () => {
    const [local] = asRecords(rows("SELECT * FROM system.local WHERE key='local'"));
    expect(local).toEqual({
      key: 'local',
      bootstrapped: 'COMPLETED',
      broadcast_address: '10.0.0.2',
      broadcast_port: 9043,
      cluster_name: 'Test Cluster',
      cql_version: '3.4.7',
      data_center: 'datacenter1',
      gossip_generation: 1_700_000_000,
      host_id: members.members[1]?.hostId,
      listen_address: '10.0.0.2',
      listen_port: 9043,
      native_protocol_version: '5',
      partitioner: 'org.apache.cassandra.dht.Murmur3Partitioner',
      rack: 'rack1',
      release_version: '5.0.2',
      rpc_address: '10.0.0.2',
      rpc_port: 9043,
      schema_version: SCHEMA_VERSION,
      tokens: members.members[1]?.tokens,
      truncated_at: null,
    });
  });

  it('never advertises 0.0.0.0: without an advertised address it uses the socket’s local address', () => {
    const alone = deriveMembership(
      { self: { id: 'x', address: '0.0.0.0', nativePort: 9042 }, endpoints: [], heartbeats: [] },
      { clusterName: 'c', defaultDc: 'dc1' },
    );
    const context = { ...ctx, view: advanceView(undefined, alone), localAddress: '::ffff:192.168.1.5' };
    expect(asRecords(rows('SELECT rpc_address, broadcast_address FROM system.local', undefined, context))).toEqual([
      { rpc_address: '192.168.1.5', broadcast_address: '192.168.1.5' },
    ]);
  });

  it('returns no row for another key', () => {
    expect(rows("SELECT * FROM system.local WHERE key = 'other'").rows).toEqual([]);
  });

  it('serves schema_version alone, as drivers poll it for agreement', () => {
    expect(rows("SELECT schema_version FROM system.local WHERE key='local'").rows).toEqual([[SCHEMA_VERSION]]);
  });
});

describe('system.peers', () => {
  it('reads quoted, commented and mixed-case names the same way', () => {
    const r = rows('/* c */ SELECT "peer", RPC_ADDRESS AS "Addr" FROM "system"."peers" -- tail\n WHERE PEER = \'10.0.0.3\';');
    expect(r).toMatchObject({ names: ['peer', 'Addr'], rows: [['10.0.0.3', '10.0.0.3']] });
  });

  it('lists every other member in ring order, never self', () => {
    const r = rows('SELECT peer, rpc_address FROM system.peers');
    expect(r.names).toEqual(['peer', 'rpc_address']);
    expect(r.rows).toEqual([
      ['10.0.0.1', '10.0.0.1'],
      ['10.0.0.3', '10.0.0.3'],
    ]);
  });

  it('fills SELECT * from the member and the backend, never the backend node', () => {
    const [a] = asRecords(rows('SELECT * FROM system.peers'));
    expect(a).toEqual({
      peer: '10.0.0.1',
      data_center: 'datacenter1',
      host_id: members.members[0]?.hostId,
      preferred_ip: null,
      rack: 'rack1',
      release_version: '5.0.3',
      rpc_address: '10.0.0.1',
      schema_version: SCHEMA_VERSION,
      tokens: members.members[0]?.tokens,
    });
    const everything = JSON.stringify(
      [rows('SELECT * FROM system.peers').rows, rows('SELECT * FROM system.local').rows],
      (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v),
    );
    expect(everything).not.toContain('172.17.0.2');
    expect(everything).not.toContain('11111111-1111');
  });

  it("answers the Java driver's refresh WHERE peer = :address with only that peer's row", () => {
    const byName = rows('SELECT * FROM system.peers WHERE peer = :address', { values: [inet('10.0.0.3')], names: ['address'] });
    expect(byName.rows).toHaveLength(1);
    expect(asRecords(byName)[0]?.['peer']).toBe('10.0.0.3');
    // Prepared and executed: values arrive by position.
    expect(rows('SELECT * FROM system.peers WHERE peer = :address', { values: [inet('10.0.0.1')] }).rows.map((r) => r[0])).toEqual([
      '10.0.0.1',
    ]);
    expect(rows('SELECT peer FROM system.peers WHERE peer = ?', { values: [inet('10.0.0.9')] }).rows).toEqual([]);
    expect(rows('SELECT peer FROM system.peers WHERE peer = ?', { values: [inet('::ffff:10.0.0.1')] }).rows).toEqual([['10.0.0.1']]);
  });

  it('answers IN on the partition key: listed, bound one by one, or bound as a list', () => {
    expect(rows("SELECT peer FROM system.peers WHERE peer IN ('10.0.0.3', '10.9.9.9', '10.0.0.1')").rows).toEqual([
      ['10.0.0.1'],
      ['10.0.0.3'],
    ]);
    expect(rows('SELECT peer FROM system.peers WHERE peer IN (?, ?)', { values: [inet('10.0.0.3'), inet('10.0.0.8')] }).rows).toEqual([
      ['10.0.0.3'],
    ]);
    const list = encodeCell(types.list(types.inet), ['10.0.0.1', '10.0.0.3']);
    expect(rows('SELECT peer FROM system.peers WHERE peer IN ?', { values: [list] }).rows).toHaveLength(2);
    expect(rows('SELECT peer FROM system.peers WHERE peer IN ()').rows).toEqual([]);
    expect(refusal('SELECT peer FROM system.peers WHERE peer IN ?', { values: [null] })).toBe('Invalid null value for column peer');
    expect(refusal("SELECT peer FROM system.peers WHERE rack IN ('rack1')")).toMatch(/ALLOW FILTERING/);
    expect(rows("SELECT peer FROM system.peers WHERE rack IN ('rack1') ALLOW FILTERING").rows).toHaveLength(2);
    expect(refusal("SELECT peer FROM system.peers WHERE peer IN ('10.0.0.1') AND peer = '10.0.0.1'")).toMatch(/more than one relation/);
  });

  it('matches literal addresses too', () => {
    expect(rows("SELECT peer FROM system.peers WHERE peer = '10.0.0.3'").rows).toEqual([['10.0.0.3']]);
    expect(refusal("SELECT peer FROM system.peers WHERE peer = 'nope'")).toMatch(/Unable to make inet address from 'nope'/);
    expect(refusal('SELECT peer FROM system.peers WHERE peer = 1')).toBe('Invalid INTEGER constant (1) for "peer" of type inet');
  });

  it('counts rows as bigint named count, and honours aliases', () => {
    const r = rows('SELECT count(*) FROM system.peers');
    expect(r.result.columns).toEqual([{ keyspace: 'system', table: 'peers', name: 'count', type: types.bigint }]);
    expect(r.rows).toEqual([[2n]]);
    expect(rows('SELECT COUNT(1) AS n FROM system.peers WHERE peer = ?', { values: [inet('10.0.0.1')] })).toMatchObject({
      names: ['n'],
      rows: [[1n]],
    });
    expect(rows("SELECT count(*) FROM system.peers WHERE peer = '10.9.9.9'").rows).toEqual([[0n]]);
    expect(rows('SELECT count(preferred_ip), count(peer) FROM system.peers')).toMatchObject({
      names: ['system.count(preferred_ip)', 'system.count(peer)'],
      rows: [[0n, 2n]],
    });
    expect(rows('SELECT peer AS address, count(*) FROM system.peers').rows).toEqual([['10.0.0.1', 2n]]);
  });

  it('honours LIMIT, literal or bound, and applies it after aggregation', () => {
    expect(rows('SELECT peer FROM system.peers LIMIT 1').rows).toEqual([['10.0.0.1']]);
    expect(rows('SELECT peer FROM system.peers LIMIT ?', { values: [int(1)] }).rows).toHaveLength(1);
    expect(rows('SELECT peer FROM system.peers LIMIT ?', { values: [UNSET] }).rows).toHaveLength(2);
    expect(rows('SELECT count(*) FROM system.peers LIMIT 1').rows).toEqual([[2n]]);
    expect(refusal('SELECT peer FROM system.peers LIMIT 0')).toBe('LIMIT must be strictly positive');
    expect(refusal('SELECT peer FROM system.peers LIMIT ?', { values: [null] })).toBe('Invalid null value of limit');
  });

  it('refuses an unknown column, naming it and the table', () => {
    expect(refusal('SELECT nope FROM system.peers')).toBe('Undefined column name nope in table system.peers');
    expect(refusal("SELECT * FROM system.peers WHERE nope = 'x' ALLOW FILTERING")).toBe('Undefined column name nope in table system.peers');
    expect(refusal('SELECT "Peer" FROM system.peers')).toBe('Undefined column name Peer in table system.peers');
    expect(refusal('SELECT count(nope) FROM system.local')).toBe('Undefined column name nope in table system.local');
  });

  it('needs ALLOW FILTERING for other columns, as a real server does', () => {
    expect(refusal("SELECT * FROM system.peers WHERE data_center = 'datacenter1'")).toMatch(/use ALLOW FILTERING/);
    expect(rows("SELECT peer FROM system.peers WHERE data_center = 'datacenter1' ALLOW FILTERING").rows).toHaveLength(2);
    expect(rows("SELECT peer FROM system.peers WHERE data_center = 'elsewhere' ALLOW FILTERING").rows).toHaveLength(0);
    expect(refusal('SELECT * FROM system.peers WHERE tokens = ? ALLOW FILTERING', { values: [Buffer.alloc(4)] })).toMatch(
      "Collection column 'tokens' (set<text>) cannot be restricted by a '=' relation",
    );
    expect(parseSystemQuery("SELECT * FROM system.peers WHERE tokens = {'1'}")).toMatchObject({
      ok: false,
      message: expect.stringMatching(/the term \{ is not supported/),
    });
  });

  // The messages were compared with a Cassandra 5.0.8 answering the same statements.
  it('refuses bad or missing bind values with the message a server gives', () => {
    expect(refusal('SELECT * FROM system.peers WHERE peer = ?')).toBe('Invalid amount of bind variables');
    expect(refusal('SELECT * FROM system.peers WHERE peer = ?', { values: [null] })).toBe(
      'Invalid null value in condition for column peer',
    );
    expect(refusal('SELECT * FROM system.peers WHERE peer = ?', { values: [UNSET] })).toBe('Invalid unset value for column peer');
    expect(refusal('SELECT * FROM system.peers WHERE peer = ?', { values: [Buffer.from([1, 2, 3])] })).toMatch(
      /Invalid value for column peer of type inet/,
    );
    expect(refusal('SELECT * FROM system.peers WHERE peer = :address', { values: [inet('10.0.0.1')], names: ['other'] })).toBe(
      'No value given for the bind marker :address',
    );
    expect(refusal("SELECT * FROM system.peers WHERE peer = '10.0.0.1' AND peer = '10.0.0.3'")).toMatch(/more than one relation/);
  });
});

describe('system.peers_v2', () => {
  it('adds peer_port and native_port, so instances may listen on different ports', () => {
    expect(rows('SELECT peer, peer_port, native_address, native_port FROM system.peers_v2').rows).toEqual([
      ['10.0.0.1', 9042, '10.0.0.1', 9042],
      ['10.0.0.3', 9044, '10.0.0.3', 9044],
    ]);
  });

  it("answers the Java driver's WHERE peer = :address AND peer_port = :port", () => {
    const cql = 'SELECT * FROM system.peers_v2 WHERE peer = :address AND peer_port = :port';
    expect(rows(cql, { values: [inet('10.0.0.3'), int(9044)] }).rows).toHaveLength(1);
    expect(rows(cql, { values: [int(9042), inet('10.0.0.3')], names: ['port', 'address'] }).rows).toHaveLength(0);
    expect(rows('SELECT peer FROM system.peers_v2 WHERE peer = ? AND peer_port = 9044', { values: [inet('10.0.0.3')] }).rows).toEqual([
      ['10.0.0.3'],
    ]);
  });

  it('answers the Java driver 4 statement as it writes it (lower-case and), values bound by name', () => {
    const cql = 'SELECT * FROM system.peers_v2 WHERE peer = :address and peer_port = :port';
    expect(rows(cql, { values: [inet('10.0.0.1'), int(9042)], names: ['address', 'port'] }).rows).toHaveLength(1);
  });

  it('needs the partition key or ALLOW FILTERING to restrict peer_port', () => {
    expect(refusal('SELECT * FROM system.peers_v2 WHERE peer_port = 9042')).toMatch(/ALLOW FILTERING/);
    expect(rows('SELECT peer FROM system.peers_v2 WHERE peer_port = 9042 ALLOW FILTERING').rows).toEqual([['10.0.0.1']]);
  });
});

describe('encoding', () => {
  it('gives every cell a value its column type encodes', () => {
    for (const table of ['local', 'peers', 'peers_v2']) {
      const r = select(`SELECT * FROM system.${table}`);
      if (!r.ok) throw new Error(r.message);
      const encoded = toRowsResult(r);
      if (encoded.kind !== 'Rows') throw new Error('not rows');
      encoded.rows.forEach((row, i) =>
        row.forEach((cell, j) => {
          const type = r.columns[j]?.type ?? types.blob;
          expect(decodeCell(type, cell)).toEqual(r.rows[i]?.[j]);
        }),
      );
    }
  });
});

describe('prepared statements', () => {
  it('describe bind variables, partition key indexes and result columns', () => {
    const parsed = parseSystemQuery(
      'SELECT peer, count(*) AS n FROM system.peers_v2 WHERE peer = :address AND peer_port = ? LIMIT ? USING TIMEOUT ?',
    );
    if (!parsed.ok) throw new Error(parsed.message);
    const shape = preparedShape(parsed.query, systemSchemas());
    expect(shape).toEqual({
      ok: true,
      variables: [
        { keyspace: 'system', table: 'peers_v2', name: 'address', type: types.inet },
        { keyspace: 'system', table: 'peers_v2', name: 'peer_port', type: types.int },
        { keyspace: 'system', table: 'peers_v2', name: '[limit]', type: types.int },
        { keyspace: 'system', table: 'peers_v2', name: '[timeout]', type: { id: 0x15 } },
      ],
      pkIndexes: [0],
      columns: [
        { keyspace: 'system', table: 'peers_v2', name: 'peer', type: types.inet },
        { keyspace: 'system', table: 'peers_v2', name: 'n', type: types.bigint },
      ],
    });
  });

  it('type an IN ? marker as a list and give no routing index for IN', () => {
    const parsed = parseSystemQuery('SELECT peer FROM system.peers WHERE peer IN ?');
    if (!parsed.ok) throw new Error(parsed.message);
    expect(preparedShape(parsed.query, systemSchemas())).toMatchObject({
      variables: [{ name: 'in(peer)', type: types.list(types.inet) }],
      pkIndexes: [],
    });
  });

  it('refuse at PREPARE what EXECUTE would refuse', () => {
    const parsed = parseSystemQuery('SELECT nope FROM system.local');
    if (!parsed.ok) throw new Error(parsed.message);
    expect(preparedShape(parsed.query, systemSchemas())).toEqual({
      ok: false,
      message: 'Undefined column name nope in table system.local',
    });
  });
});

describe('bind values of other types', () => {
  it('decode text for key', () => {
    expect(rows('SELECT key FROM system.local WHERE key = ?', { values: [text('local')] }).rows).toEqual([['local']]);
  });

  it('accept tableSchema on its own', () => {
    expect(tableSchema('peers').partitionKey).toEqual(['peer']);
  });
});

describe('native functions in a system.local read (health checks, cqlsh, drivers)', () => {
  it('now(), uuid(), toTimestamp(now()), currentTimestamp() and the rest, with the server types and column names', () => {
    const before = Date.now();
    const r = select(
      'SELECT now(), uuid(), toTimestamp(now()), currentTimestamp(), currentDate(), currentTime(), toUnixTimestamp(now()), ' +
        'system.toDate(now()) AS today, currentTimeUUID() FROM system.local',
    );
    if (!r.ok) throw new Error(r.message);
    expect(r.columns.map((c) => [c.name, cqlTypeName(c.type)])).toEqual([
      ['system.now()', 'timeuuid'],
      ['system.uuid()', 'uuid'],
      ['system.totimestamp(system.now())', 'timestamp'],
      ['system.currenttimestamp()', 'timestamp'],
      ['system.currentdate()', 'date'],
      ['system.currenttime()', 'time'],
      ['system.tounixtimestamp(system.now())', 'bigint'],
      ['today', 'date'],
      ['system.currenttimeuuid()', 'timeuuid'],
    ]);
    const [row] = r.rows;
    expect(row![0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-1[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(timeUuidMillis(row![0] as string)).toBeGreaterThanOrEqual(before);
    expect((row![2] as Date).getTime()).toBeGreaterThanOrEqual(before);
    expect(Number(row![6])).toBeGreaterThanOrEqual(before);
    // Every cell encodes with its column's type, as the RESULT will carry it.
    const encoded = toRowsResult(r);
    expect(encoded.kind).toBe('Rows');
  });

  it('toJson() of each column type', () => {
    const r = asRecords(
      rows('SELECT toJson(key), toJson(tokens), toJson(host_id), toJson(rpc_address), toJson(rpc_port) FROM system.local'),
    );
    expect(r[0]).toEqual({
      'system.tojson(key)': '"local"',
      'system.tojson(tokens)': expect.stringMatching(/^\["-?\d+"(, "-?\d+")*\]$/),
      'system.tojson(host_id)': expect.stringMatching(/^"[0-9a-f-]{36}"$/),
      'system.tojson(rpc_address)': '"10.0.0.2"',
      'system.tojson(rpc_port)': '9043',
    });
  });

  it('unknown functions, wrong arities and wrong argument types are INVALID with the supported list', () => {
    for (const [cql, message] of [
      ['SELECT writetime(key) FROM system.local', /Unknown function system.writetime\(\).*now\(\)/],
      ['SELECT token(peer) FROM system.peers', /Unknown function system.token\(\)/],
      ['SELECT now(key) FROM system.local', /Invalid number of arguments/],
      ['SELECT toTimestamp(key) FROM system.local', /Type error/],
      ['SELECT toJson(nope) FROM system.local', /Undefined column name nope/],
    ] as const) {
      const r = select(cql);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.message).toMatch(message);
    }
  });

  it('PREPARE of a function selector has the same result columns', () => {
    const parsed = parseSystemQuery('SELECT now() AS n, toJson(host_id) FROM system.local WHERE key = ?');
    if (!parsed.ok) throw new Error(parsed.message);
    const shape = preparedShape(parsed.query, systemSchemas());
    if (!shape.ok) throw new Error(shape.message);
    expect(shape.columns.map((c) => c.name)).toEqual(['n', 'system.tojson(host_id)']);
  });
});

describe('toJson() formats', () => {
  it('writes maps, timestamps, dates, times and blobs as Cassandra does', () => {
    const map = types.map(types.uuid, types.blob);
    expect(toJson(map, new Map([['176c39cd-b93d-33a5-a218-8eb06a56f66e', Buffer.from('0001', 'hex')]]))).toBe(
      '{"176c39cd-b93d-33a5-a218-8eb06a56f66e": "0x0001"}',
    );
    expect(toJson(types.map(types.int, types.varchar), new Map([[1, 'a']]))).toBe('{"1": "a"}');
    expect(toJson(types.timestamp, new Date('2026-12-03T09:58:09.796Z'))).toBe('"2026-12-03 09:58:09.796Z"');
    expect(toJson({ id: DataTypeId.DATE }, new Date('2026-12-03T00:00:00Z'))).toBe('"2026-12-03"');
    expect(toJson({ id: DataTypeId.TIME }, 35_889_803_787_118n)).toBe('"09:58:09.803787118"');
    expect(toJson(types.set(types.varchar), ['-9223372036854775808', '0'])).toBe('["-9223372036854775808", "0"]');
    expect(toJson(types.varchar, 'say "hi"')).toBe('"say \\"hi\\""');
  });
});
