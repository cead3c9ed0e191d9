import { describe, expect, it } from '@jest/globals';
import { mayReadSystem, statementTarget } from '../../src/virtual/statement-target.js';
import { listedTables, tablePolicy } from '../../src/virtual/system-keyspaces.js';

describe('what a statement reads', () => {
  it.each([
    ['SELECT * FROM system_views.gossip_info', undefined, { kind: 'select', keyspace: 'system_views', table: 'gossip_info' }],
    [
      'select JSON peer from "system"."peer_events_v2" where peer = ?',
      undefined,
      { kind: 'select', keyspace: 'system', table: 'peer_events_v2' },
    ],
    [
      '/* probe */ SELECT count(*), toJson(x) FROM gossip_info;',
      'system_views',
      { kind: 'select', keyspace: 'system_views', table: 'gossip_info' },
    ],
    ['SELECT * FROM t', 'ks', { kind: 'select', keyspace: 'ks', table: 't' }],
    ['SELECT * FROM t', undefined, { kind: 'select', keyspace: undefined, table: 't' }],
    ['DESCRIBE CLUSTER', 'ks', { kind: 'describe-cluster' }],
    ['desc cluster;', undefined, { kind: 'describe-cluster' }],
    ['DESCRIBE FULL SCHEMA', undefined, { kind: 'other' }],
    ['DESCRIBE KEYSPACE cluster', undefined, { kind: 'other' }],
    ['INSERT INTO system.peers (peer) VALUES (?)', undefined, { kind: 'modify', tables: [{ keyspace: 'system', table: 'peers' }] }],
    [
      "update local SET rack = 'r' WHERE key = 'local' IF host_id = 00000000-0000-0000-0000-000000000000",
      'system',
      { kind: 'modify', tables: [{ keyspace: 'system', table: 'local' }] },
    ],
    [
      'DELETE m[\'from\'] FROM "system".peers WHERE peer = ?',
      undefined,
      { kind: 'modify', tables: [{ keyspace: 'system', table: 'peers' }] },
    ],
    ['TRUNCATE TABLE system.peers_v2', undefined, { kind: 'modify', tables: [{ keyspace: 'system', table: 'peers_v2' }] }],
    ['truncate ks.t', undefined, { kind: 'modify', tables: [{ keyspace: 'ks', table: 't' }] }],
    [
      "BEGIN UNLOGGED BATCH INSERT INTO ks.t (k) VALUES (1); UPDATE system.local SET rack = 'r' WHERE key = 'local' APPLY BATCH",
      undefined,
      {
        kind: 'modify',
        tables: [
          { keyspace: 'ks', table: 't' },
          { keyspace: 'system', table: 'local' },
        ],
      },
    ],
    // Arithmetic in selectors: tokenized, so the proxy reads the table it names.
    ['SELECT peer, 4 / 2, 5 % 2 FROM system.peers', undefined, { kind: 'select', keyspace: 'system', table: 'peers' }],
    // What may touch a system table but does not tokenize is never forwarded unchecked.
    ["SELECT 'unterminated FROM system.peers", undefined, { kind: 'unreadable', message: 'unterminated string at character 8' }],
    ['SELECT peer, 1 & 2 FROM system.peers', undefined, { kind: 'unreadable', message: 'unexpected character "&" at character 16' }],
    ['SELECT a & b FROM ks.t', 'ks', { kind: 'other' }],
    // A line comment ends at a carriage return too, as in Cassandra's lexer (a lone \r hid the table).
    ['SELECT peer FROM -- x\rsystem.peers', undefined, { kind: 'select', keyspace: 'system', table: 'peers' }],
    ['SELECT peer FROM // x\r\nsystem.peers_v2', undefined, { kind: 'select', keyspace: 'system', table: 'peers_v2' }],
    [
      "-- x\rUPDATE system.local SET rack = 'r' WHERE key = 'local'",
      undefined,
      { kind: 'modify', tables: [{ keyspace: 'system', table: 'local' }] },
    ],
  ] as const)('%s (keyspace %s)', (query, keyspace, target) => {
    expect(statementTarget(query, keyspace)).toEqual(target);
  });

  it('the cheap check lets through every statement that may read a guarded table', () => {
    expect(mayReadSystem('SELECT * FROM "System_Views".x', undefined)).toBe(true);
    expect(mayReadSystem('SELECT * FROM gossip_info', 'system_views')).toBe(true);
    expect(mayReadSystem('-- c\nDESCRIBE CLUSTER', 'ks')).toBe(true);
    expect(mayReadSystem('-- c\rDESCRIBE CLUSTER', 'ks')).toBe(true);
    expect(mayReadSystem('// c\rSELECT peer FROM system.peers', 'ks')).toBe(true);
    expect(mayReadSystem('SELECT * FROM ks.t WHERE k = 1', 'ks')).toBe(false);
    expect(mayReadSystem("UPDATE system.local SET rack = 'r' WHERE key = 'local' IF rack = 'x'", 'ks')).toBe(true);
    expect(mayReadSystem('BEGIN BATCH DELETE FROM peers WHERE peer = ? APPLY BATCH', 'system')).toBe(true);
    expect(mayReadSystem('INSERT INTO ks.t (k) VALUES (1)', 'ks')).toBe(false);
    expect(mayReadSystem('CREATE TABLE ks.system (k int PRIMARY KEY)', 'ks')).toBe(false);
  });
});

describe('system table policy', () => {
  it('answers system.local/peers/peers_v2 from the virtual cluster', () => {
    for (const table of ['local', 'peers', 'peers_v2']) expect(tablePolicy('system', table)).toEqual({ kind: 'virtual' });
  });

  it('refuses the tables that name nodes or hold token ranges, and unknown tables of system and system_views', () => {
    for (const [ks, table] of [
      ['system', 'peer_events_v2'],
      ['system', 'size_estimates'],
      ['system_views', 'gossip_info'],
      ['system_views', 'clients'],
      ['system_views', 'settings'],
      ['system_traces', 'sessions'],
      ['system_distributed', 'repair_history'],
      ['system', 'a_table_from_cassandra_6'],
      ['system_views', 'a_table_from_cassandra_6'],
    ] as const) {
      expect(tablePolicy(ks, table).kind).toBe('refuse');
    }
  });

  it('passes schema, roles, local activity and user tables', () => {
    for (const [ks, table] of [
      ['system_schema', 'tables'],
      ['system_schema', 'a_table_from_cassandra_6'],
      ['system_auth', 'roles'],
      ['system_virtual_schema', 'columns'],
      ['system', 'compaction_history'],
      ['system_views', 'thread_pools'],
      ['ks', 'peers'],
    ] as const) {
      expect(tablePolicy(ks, table)).toEqual({ kind: 'pass' });
    }
  });

  it('the README lists every table with a decision of its own', async () => {
    const { readFile } = await import('node:fs/promises');
    const doc = await readFile(new URL('../../docs/system-tables.md', import.meta.url), 'utf8');
    const missing = listedTables().filter(({ keyspace, table }) => !doc.includes(`\`${keyspace}.${table}\``));
    expect(missing).toEqual([]);
  });
});
