import { describe, expect, it } from '@jest/globals';
import { CqlLexer } from '../../src/virtual/cql-lexer.js';
import { isSystemTableQuery, parseSystemQuery, type SystemQuery } from '../../src/virtual/system-query.js';

const parsed = (cql: string, keyspace?: string): SystemQuery => {
  const r = parseSystemQuery(cql, keyspace);
  if (!r.ok) throw new Error(`expected ${cql} to parse: ${r.message}`);
  return r.query;
};
const refused = (cql: string): string => {
  const r = parseSystemQuery(cql);
  if (r.ok) throw new Error(`expected ${cql} to be refused`);
  return r.message;
};

describe('isSystemTableQuery', () => {
  it.each([
    "SELECT * FROM system.local WHERE key='local'",
    'select * from system.peers',
    'SELECT * FROM system.peers_v2;',
    'SELECT * FROM SYSTEM.LOCAL',
    'SELECT * FROM "system"."peers"',
    'SELECT peer, rpc_address FROM System.Peers',
    'SELECT count(*) FROM system.peers',
    '  -- a comment\n/* another */ SELECT * FROM system . local',
    '// slashes\nSELECT "from" FROM system.local',
    'SELECT * FROM system.local /* trailing */ ;',
  ])('recognises %j', (cql) => expect(isSystemTableQuery(cql)).toBe(true));

  it.each([
    'SELECT * FROM ks.local_stuff',
    'SELECT * FROM system.local_stuff',
    'SELECT * FROM system.peers_v3',
    'SELECT * FROM system_schema.local',
    'SELECT * FROM system."LOCAL"',
    'SELECT * FROM "System".local',
    'SELECT local, peers FROM ks.t',
    "INSERT INTO system.peers (peer) VALUES ('10.0.0.1')",
    "UPDATE ks.local SET x = 1 WHERE k = 'peers'",
    "SELECT 'unterminated FROM system.local",
    'SELECT * FROM local',
    '/* select * from system.local */ DELETE FROM ks.peers WHERE k = 1',
    '',
  ])('leaves %j to the backend', (cql) => expect(isSystemTableQuery(cql)).toBe(false));

  it('takes the keyspace from USE or the v5 keyspace flag for unqualified names', () => {
    expect(isSystemTableQuery('SELECT * FROM local', 'system')).toBe(true);
    expect(isSystemTableQuery('SELECT * FROM "peers_v2"', 'system')).toBe(true);
    expect(isSystemTableQuery('SELECT * FROM local', 'ks')).toBe(false);
    expect(isSystemTableQuery('SELECT * FROM ks.local', 'system')).toBe(false);
    expect(isSystemTableQuery('SELECT * FROM system.local', 'ks')).toBe(true);
  });

  it('skips leading comments in linear time (no regex backtracking)', () => {
    const started = performance.now();
    expect(isSystemTableQuery(`${'/**/'.repeat(50_000)} x local`)).toBe(false);
    expect(isSystemTableQuery(`${'/**/ -- c\n'.repeat(50_000)}SELECT * FROM system.local`)).toBe(true);
    expect(isSystemTableQuery('-- only a comment about system.local')).toBe(false);
    expect(isSystemTableQuery('SELECTED * FROM system.local')).toBe(false);
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it('stays cheap on large statements that are not ours', () => {
    // Generous bounds: a full tokenization of these would take far longer than a prefix check.
    const insert = `INSERT INTO ks.t (k, v) VALUES (1, '${'x'.repeat(5_000_000)}')`;
    const select = `SELECT * FROM ks.t WHERE k = '${'x'.repeat(5_000_000)}'`;
    let started = performance.now();
    for (let i = 0; i < 100; i++) isSystemTableQuery(insert);
    expect(performance.now() - started).toBeLessThan(1_000);
    started = performance.now();
    for (let i = 0; i < 10; i++) isSystemTableQuery(select);
    expect(performance.now() - started).toBeLessThan(3_000);
  });
});

describe('parseSystemQuery', () => {
  it("parses cassandra-driver's local query", () => {
    expect(parsed("SELECT * FROM system.local WHERE key='local'")).toEqual({
      table: 'local',
      where: [{ column: 'key', value: { kind: 'literal', literal: { type: 'string', value: 'local' } } }],
      allowFiltering: false,
      markers: [],
    });
  });

  it("parses the Java driver's one-peer refresh with a named marker", () => {
    const q = parsed('SELECT * FROM system.peers WHERE peer = :address');
    expect(q.where).toEqual([{ column: 'peer', value: { kind: 'marker', index: 0 } }]);
    expect(q.markers).toEqual([{ index: 0, name: 'address', named: true, receiver: { kind: 'column', column: 'peer' } }]);
  });

  it('names positional markers as Cassandra does, in statement order', () => {
    const q = parsed('SELECT * FROM system.peers_v2 WHERE peer = ? AND peer_port = ? LIMIT ? USING TIMEOUT ?');
    expect(q.markers.map((m) => [m.index, m.name, m.named])).toEqual([
      [0, 'peer', false],
      [1, 'peer_port', false],
      [2, '[limit]', false],
      [3, '[timeout]', false],
    ]);
    expect(q.limit).toEqual({ kind: 'marker', index: 2 });
  });

  it('reads IN lists and IN ?, naming a list marker in(column)', () => {
    const q = parsed("SELECT * FROM system.peers WHERE peer IN ('10.0.0.1', ?) AND data_center IN :dcs ALLOW FILTERING");
    expect(q.where).toEqual([
      {
        column: 'peer',
        in: [
          { kind: 'literal', literal: { type: 'string', value: '10.0.0.1' } },
          { kind: 'marker', index: 0 },
        ],
      },
      { column: 'data_center', inList: { kind: 'marker', index: 1 } },
    ]);
    expect(q.markers.map((m) => m.name)).toEqual(['peer', 'dcs']);
    expect(parsed('SELECT * FROM system.local WHERE key IN ?').markers[0]?.name).toBe('in(key)');
    expect(parsed('SELECT * FROM system.local WHERE key IN ()').where).toEqual([{ column: 'key', in: [] }]);
  });

  it('reads selectors, aliases and counts', () => {
    expect(parsed('SELECT peer, rpc_address AS addr, "Data_Center" FROM system.peers').selectors).toEqual([
      { kind: 'column', column: 'peer' },
      { kind: 'column', column: 'rpc_address', alias: 'addr' },
      { kind: 'column', column: 'Data_Center' },
    ]);
    expect(parsed('SELECT count(*), COUNT(1) AS n, count(host_id) FROM system.peers').selectors).toEqual([
      { kind: 'count' },
      { kind: 'count', alias: 'n' },
      { kind: 'count', column: 'host_id' },
    ]);
    expect(parsed('SELECT * FROM system.peers').selectors).toBeUndefined();
  });

  it('reads LIMIT, ALLOW FILTERING and USING TIMEOUT in any order, with comments and a trailing ;', () => {
    const q = parsed(
      "SELECT * FROM system.peers -- why\n WHERE data_center = 'dc1' /* x */ ALLOW FILTERING LIMIT 2 USING TIMEOUT 1s500ms ;",
    );
    expect(q.limit).toEqual({ kind: 'literal', literal: { type: 'integer', text: '2' } });
    expect(q.allowFiltering).toBe(true);
    expect(q.timeout).toEqual({ kind: 'literal', literal: { type: 'duration', text: '1s500ms' } });
    expect(parsed('SELECT * FROM system.local USING TIMEOUT 10s LIMIT 1').limit).toBeDefined();
  });

  it('reads literals of every kind a relation may carry', () => {
    const q = parsed(
      "SELECT * FROM system.peers WHERE a = 'it''s' AND b = -42 AND c = 1.5 AND d = 550e8400-e29b-41d4-a716-446655440000 AND e = 0xCAFE AND f = true AND g = $$x$$",
    );
    expect(q.where.map((r) => ('value' in r && r.value.kind === 'literal' ? r.value.literal : undefined))).toEqual([
      { type: 'string', value: "it's" },
      { type: 'integer', text: '-42' },
      { type: 'float', text: '1.5' },
      { type: 'uuid', text: '550e8400-e29b-41d4-a716-446655440000' },
      { type: 'blob', text: '0xCAFE' },
      { type: 'boolean', value: true },
      { type: 'string', value: 'x' },
    ]);
  });

  it('resolves quoted, mixed-case and keyspace-relative names', () => {
    expect(parsed('SELECT * FROM "system"."peers_v2"').table).toBe('peers_v2');
    expect(parsed('SELECT * FROM SYSTEM.LOCAL').table).toBe('local');
    expect(parsed('SELECT * FROM peers', 'system').table).toBe('peers');
  });

  it.each([
    ['SELECT JSON * FROM system.local', /SELECT JSON is not supported on system\.local/],
    ['SELECT DISTINCT peer FROM system.peers', /SELECT DISTINCT is not supported/],
    ['SELECT * FROM system.peers WHERE peer > 1', /the relation "peer > \.\.\." is not supported on system\.peers/],
    ["SELECT * FROM system.peers WHERE peer IN ('10.0.0.1'", /expected , or \) in the IN list/],
    ['SELECT * FROM system.peers WHERE peer IN 1', /expected \( or a bind marker after IN/],
    ['SELECT * FROM system.peers WHERE token(peer) > 0', /not supported/],
    ['SELECT * FROM system.peers ORDER BY peer', /ORDER BY is not supported/],
    ['SELECT * FROM system.peers PER PARTITION LIMIT 1', /PER PARTITION is not supported/],
    ['SELECT * FROM system.peers GROUP BY peer', /GROUP BY is not supported/],
    ['SELECT peer + 1 FROM system.peers', /not supported/],
    ["SELECT * FROM system.local WHERE key = 'local", /Syntax error on system\.local at character 40: unterminated string/],
    ['SELECT * FROM system.local; SELECT 1', /unexpected select after the statement/i],
    ['SELECT * FROM system.local LIMIT 1 LIMIT 2', /LIMIT given twice/],
    ['SELECT * FROM system.local WHERE', /value was expected|expected|not supported/],
    ['SELECT FROM system.local', /expected a selector but found FROM|not supported/],
    ['SELECT * FROM system.local_stuff', /system\.local_stuff is not system\.local/],
    ['SELECT * FROM system.local /* open', /unterminated \/\* comment/],
  ])('refuses %j with a clear message', (cql, message) => {
    expect(refused(cql)).toMatch(message);
  });

  it('says what is supported when refusing', () => {
    expect(refused('SELECT JSON * FROM system.local')).toMatch(
      /supports SELECT with \*, columns, aliases, count\(\*\) and the functions now\(\)/,
    );
  });
});

describe('the lexer', () => {
  it('reads durations, named markers with quoted names, and symbols', () => {
    const lexer = new CqlLexer('500ms :"Addr" :name ? <= 1h30m');
    const kinds = [];
    for (let t = lexer.next(); t.kind !== 'end'; t = lexer.next()) kinds.push(t);
    expect(kinds.map((t) => t.kind)).toEqual(['duration', 'named-marker', 'named-marker', 'marker', 'symbol', 'duration']);
    expect(kinds[1]).toMatchObject({ name: 'Addr' });
    expect(kinds[2]).toMatchObject({ name: 'name' });
  });

  it('refuses malformed numbers and durations', () => {
    expect(() => new CqlLexer('5sec').next()).toThrow(/duration/);
    expect(() => new CqlLexer('12abc').next()).toThrow();
    expect(() => new CqlLexer('""').next()).toThrow(/empty quoted identifier/);
  });
});
