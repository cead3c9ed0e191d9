// Walks every table of the backend's system keyspaces and every DESCRIBE form through a proxy and
// finds any trace of a backend node (address, host id, token) in what comes back. Shared by the
// single-node and three-node walks (system-walk.cassandra*.test.ts).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { testServer } from '../../../../scripts/testenv/state.mjs';
import { decodeCell, type CellValue } from '../../src/protocol/cells.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { listedTables, SYSTEM_KEYSPACES, tablePolicy } from '../../src/virtual/system-keyspaces.js';
import { startProxy, type CassandraEntry, type RunningProxy } from './harness.js';
import { Consistency } from '../../src/protocol/consistency.js';
import { decodeError, type ErrorMessage } from '../../src/protocol/error-message.js';
import { Opcode } from '../../src/protocol/frame.js';
import { addressToBytes } from '../../src/protocol/inet.js';
import { encodeExecute, encodePrepare, encodeQuery, encodeStartup } from '../../src/protocol/requests.js';
import { decodeResult, type ColumnSpec } from '../../src/protocol/result.js';
import { DataTypeId, type DataType } from '../../src/protocol/types.js';
import { RawClient } from './raw-client.js';

/** A bare v4 connection past STARTUP, one request at a time. */
export class Cql {
  #stream = 0;
  private constructor(readonly raw: RawClient) {}

  static async open(address: string): Promise<Cql> {
    const cql = new Cql(await RawClient.open(address));
    cql.raw.send(4, 0, Opcode.STARTUP, encodeStartup({ options: new Map([['CQL_VERSION', '3.0.0']]) }));
    const ready = await cql.raw.next(0);
    if (ready?.opcode !== Opcode.READY) throw new Error(`${address}: STARTUP answered ${ready?.opcode}`);
    return cql;
  }

  /** The answer to `query`: its raw body, and the rows or the error. */
  async query(
    query: string,
  ): Promise<{ body: Buffer; error?: ErrorMessage; columns?: readonly ColumnSpec[]; rows?: Record<string, CellValue>[] }> {
    const stream = (this.#stream = (this.#stream % 30_000) + 1);
    this.raw.send(4, stream, Opcode.QUERY, encodeQuery({ query, parameters: { consistency: Consistency.ONE } }, 4));
    const frame = await this.raw.next(stream, 60_000);
    if (!frame) throw new Error(`the connection closed before the answer to ${query}`);
    if (frame.opcode === Opcode.ERROR) return { body: frame.body, error: decodeError(frame.body) };
    const result = decodeResult(frame.body, 4);
    if (result.kind !== 'Rows') return { body: frame.body };
    const columns = result.metadata.columns ?? [];
    const rows = result.rows.map((cells) => Object.fromEntries(columns.map((c, i) => [c.name, decodeCell(c.type, cells[i] ?? null)])));
    return { body: frame.body, columns, rows };
  }

  close(): void {
    this.raw.close();
  }
}

/** What identifies the backend's nodes. */
export interface BackendIdentity {
  readonly addresses: ReadonlySet<string>;
  readonly hostIds: ReadonlySet<string>;
  readonly tokens: ReadonlySet<string>;
}

const INET_COLUMNS = ['broadcast_address', 'listen_address', 'rpc_address', 'peer', 'preferred_ip', 'native_address'];

/** Reads system.local and system.peers_v2 of every node, directly. */
export async function backendIdentity(contactPoints: readonly string[]): Promise<BackendIdentity> {
  const addresses = new Set<string>();
  const hostIds = new Set<string>();
  const tokens = new Set<string>();
  for (const contact of contactPoints) {
    const cql = await Cql.open(contact);
    try {
      for (const table of ['system.local', 'system.peers_v2']) {
        for (const row of (await cql.query(`SELECT * FROM ${table}`)).rows ?? []) {
          for (const c of INET_COLUMNS) if (typeof row[c] === 'string') addresses.add(row[c]);
          if (typeof row.host_id === 'string') hostIds.add(row.host_id);
          for (const t of (row.tokens as string[] | null) ?? []) tokens.add(t);
        }
      }
    } finally {
      cql.close();
    }
  }
  return { addresses, hostIds, tokens };
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** What a backend node's address, host id or token looks like in text. */
const textPatterns = (identity: BackendIdentity) => [
  ...[...identity.addresses].map((a) => ({ what: `address ${a}`, re: new RegExp(`(?<![\\d.])${escape(a)}(?![\\d])`) })),
  ...[...identity.hostIds].map((h) => ({ what: `host id ${h}`, re: new RegExp(escape(h), 'i') })),
  ...[...identity.tokens].map((t) => ({ what: `token ${t}`, re: new RegExp(`(?<![\\d])${escape(t)}(?![\\d])`) })),
];

/** Every trace of the backend in free text (what a client printed), each with the line it is on. */
export function textLeaks(text: string, identity: BackendIdentity): string[] {
  const patterns = textPatterns(identity);
  return text.split('\n').flatMap((line) => patterns.filter((p) => p.re.test(line)).map((p) => `${p.what}: ${line.slice(0, 200)}`));
}

/** Finds every trace of the backend in one answer; each finding says where it is. */
export function leaks(
  answer: { body: Buffer; error?: ErrorMessage; columns?: readonly ColumnSpec[]; rows?: Record<string, CellValue>[] },
  identity: BackendIdentity,
): string[] {
  const found: string[] = [];
  const patterns = textPatterns(identity);
  const byteNeedles = [
    ...[...identity.hostIds].map((h) => ({ what: `host id ${h} (bytes)`, bytes: Buffer.from(h.replace(/-/g, ''), 'hex') })),
    ...[...identity.addresses].map((a) => ({ what: `address ${a} (text)`, bytes: Buffer.from(a) })),
    ...[...identity.tokens].map((t) => ({ what: `token ${t} (text)`, bytes: Buffer.from(t) })),
  ];
  const inetBytes = new Set([...identity.addresses].map((a) => addressToBytes(a).toString('hex')));
  const tokenValues = new Set([...identity.tokens]);

  const walk = (where: string, type: DataType | undefined, value: CellValue): void => {
    if (value === null) return;
    if (typeof value === 'string') {
      for (const p of patterns) if (p.re.test(value)) found.push(`${where}: ${p.what} in ${JSON.stringify(value.slice(0, 200))}`);
      if (type?.id === DataTypeId.INET && identity.addresses.has(value)) found.push(`${where}: inet ${value}`);
    } else if (typeof value === 'bigint' || typeof value === 'number') {
      if (tokenValues.has(String(value))) found.push(`${where}: token ${value} as a number`);
    } else if (Buffer.isBuffer(value)) {
      for (const n of byteNeedles) if (value.includes(n.bytes)) found.push(`${where}: ${n.what} in a blob`);
      if (value.length === 4 || value.length === 16) if (inetBytes.has(value.toString('hex'))) found.push(`${where}: address bytes`);
    } else if (Array.isArray(value)) {
      const element = type && 'element' in type ? type.element : undefined;
      value.forEach((v, i) => walk(`${where}[${i}]`, element, v));
    } else if (value instanceof Map) {
      for (const [k, v] of value) {
        walk(`${where}{key}`, type && 'key' in type ? type.key : undefined, k);
        walk(`${where}{${String(k)}}`, type && 'value' in type ? type.value : undefined, v);
      }
    }
  };

  if (answer.error) walk('error message', undefined, answer.error.message);
  (answer.rows ?? []).forEach((row, i) => {
    for (const c of answer.columns ?? []) walk(`row ${i}.${c.name}`, c.type, row[c.name] ?? null);
  });
  // Whatever the decoding missed (a custom type, a type this walk does not know): the bytes themselves.
  for (const n of byteNeedles) if (answer.body.includes(n.bytes)) found.push(`body: ${n.what}`);
  return [...new Set(found)];
}

/** The tables of the system keyspaces, from the backend's own schema tables (read through the proxy: they pass). */
export async function systemTables(cql: Cql, keyspaces: readonly string[]): Promise<{ keyspace: string; table: string }[]> {
  const out: { keyspace: string; table: string }[] = [];
  for (const source of ['system_schema.tables', 'system_virtual_schema.tables']) {
    const answer = await cql.query(`SELECT keyspace_name, table_name FROM ${source}`);
    if (answer.error) throw new Error(`${source}: ${answer.error.message}`);
    for (const row of answer.rows ?? []) {
      const keyspace = String(row.keyspace_name);
      if (keyspaces.includes(keyspace)) out.push({ keyspace, table: String(row.table_name) });
    }
  }
  return out.sort((a, b) => `${a.keyspace}.${a.table}`.localeCompare(`${b.keyspace}.${b.table}`));
}

/** `name` as CQL needs it written: quoted unless it is a plain lower-case identifier. */
export const cqlName = (name: string) => (/^[a-z][a-z0-9_]*$/.test(name) ? name : `"${name.replace(/"/g, '""')}"`);

/**
 * The walk against the testenv server `name`: a proxy on 127.0.0.50 (an address no backend node
 * has, so the proxy's own address never reads as a leak), every system table read with SELECT *,
 * every DESCRIBE form with and without a user keyspace in use.
 */
export function systemWalk(name: 'cassandra' | 'cassandra3', replication: number): void {
  const backend = testServer<CassandraEntry>(name);
  const TIMEOUT = 300_000;
  const keyspace = `walk_${process.pid}_${Date.now() % 100_000}`;

  (backend ? describe : describe.skip)(`every system table and DESCRIBE through a proxy in front of ${name}`, () => {
    let running: RunningProxy;
    let identity: BackendIdentity;
    let cql: Cql;
    beforeAll(async () => {
      identity = await backendIdentity(backend!.contactPoints);
      running = await startProxy(backend!, { host: '127.0.0.50', proxy: { advertise: { address: '127.0.0.50' } } });
      cql = await Cql.open(running.address);
      const created = await cql.query(
        `CREATE KEYSPACE IF NOT EXISTS ${keyspace} WITH replication = {'class': 'NetworkTopologyStrategy', '${backend!.localDataCenter}': ${replication}}`,
      );
      if (created.error) throw new Error(created.error.message);
      for (const ddl of [
        `CREATE TYPE IF NOT EXISTS ${keyspace}.addr (street text)`,
        `CREATE TABLE IF NOT EXISTS ${keyspace}.t (k int PRIMARY KEY, v text, a frozen<addr>)`,
        `CREATE INDEX IF NOT EXISTS t_v ON ${keyspace}.t (v) USING 'sai'`,
        `CREATE FUNCTION IF NOT EXISTS ${keyspace}.twice (x int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE java AS 'return x * 2;'`,
      ]) {
        const answer = await cql.query(ddl);
        // User functions may be disabled on the server: the DESCRIBE forms are walked all the same.
        if (answer.error && !/user.defined functions/i.test(answer.error.message)) throw new Error(`${ddl}: ${answer.error.message}`);
      }
    }, TIMEOUT);
    afterAll(async () => {
      await cql?.query(`DROP KEYSPACE IF EXISTS ${keyspace}`).catch(() => undefined);
      cql?.close();
      await running?.stop();
    }, TIMEOUT);

    it('knows the backend nodes it must not show', () => {
      expect(identity.addresses.size).toBeGreaterThanOrEqual(backend!.contactPoints.length);
      expect(identity.hostIds.size).toBe(backend!.contactPoints.length);
      expect(identity.tokens.size).toBeGreaterThanOrEqual(backend!.contactPoints.length);
      expect([...identity.addresses]).not.toContain('127.0.0.50');
    });

    it(
      'no table of the system keyspaces shows a backend address, host id or token, and each is answered as listed',
      async () => {
        const tables = await systemTables(cql, SYSTEM_KEYSPACES);
        expect(tables.length).toBeGreaterThan(50);
        const findings: string[] = [];
        const mismatches: string[] = [];
        const decisions: Record<string, string[]> = { virtual: [], pass: [], refuse: [], 'refused by default': [] };
        for (const { keyspace: ks, table } of tables) {
          const answer = await cql.query(`SELECT * FROM ${cqlName(ks)}.${cqlName(table)}`);
          const policy = tablePolicy(ks, table);
          const listed = listedTables().some((t) => t.keyspace === ks && t.table === table);
          decisions[policy.kind === 'refuse' && !listed ? 'refused by default' : policy.kind]!.push(`${ks}.${table}`);
          for (const leak of leaks(answer, identity)) findings.push(`${ks}.${table} ${leak}`);
          if (policy.kind === 'virtual' && answer.error) mismatches.push(`${ks}.${table}: ${answer.error.message}`);
          const refused =
            answer.error?.code === ErrorCode.INVALID && answer.error.message.includes(`${ks}.${table} is not served through the proxy`);
          if ((policy.kind === 'refuse') !== refused)
            mismatches.push(`${ks}.${table}: ${policy.kind}, answered ${answer.error?.message ?? 'rows'}`);
        }
        console.log(
          `${name}: ${tables.length} system tables walked\n` +
            Object.entries(decisions)
              .map(([k, v]) => `  ${k} (${v.length}): ${v.join(', ')}`)
              .join('\n'),
        );
        expect(findings).toEqual([]);
        expect(mismatches).toEqual([]);
      },
      TIMEOUT,
    );

    it(
      'a statement the backend prepared for a direct client cannot be executed through the proxy by its id',
      async () => {
        const direct = await Cql.open(backend!.contactPoints[0]!);
        try {
          direct.raw.send(4, 7, Opcode.PREPARE, encodePrepare({ query: 'SELECT * FROM system_views.gossip_info' }, 4));
          const prepared = decodeResult((await direct.raw.next(7))!.body, 4);
          if (prepared.kind !== 'Prepared') throw new Error(`PREPARE answered ${prepared.kind}`);
          cql.raw.send(4, 8, Opcode.EXECUTE, encodeExecute({ id: prepared.id, parameters: { consistency: Consistency.ONE } }, 4));
          const frame = (await cql.raw.next(8))!;
          const answer = frame.opcode === Opcode.ERROR ? { body: frame.body, error: decodeError(frame.body) } : { body: frame.body };
          expect(leaks(answer, identity)).toEqual([]);
          expect(answer.error?.code).toBe(ErrorCode.UNPREPARED);
        } finally {
          direct.close();
        }
      },
      TIMEOUT,
    );

    const describes = [
      'DESCRIBE CLUSTER',
      'DESC CLUSTER;',
      'DESCRIBE FULL SCHEMA',
      'DESCRIBE SCHEMA',
      'DESCRIBE KEYSPACES',
      'DESCRIBE KEYSPACE system',
      'DESCRIBE ONLY KEYSPACE system_views',
      `DESCRIBE KEYSPACE ${keyspace}`,
      'DESCRIBE TABLES',
      'DESCRIBE TABLE system.peers',
      'DESCRIBE TABLE system_views.gossip_info',
      `DESCRIBE TABLE ${keyspace}.t`,
      `DESCRIBE INDEX ${keyspace}.t_v`,
      'DESCRIBE TYPES',
      `DESCRIBE TYPE ${keyspace}.addr`,
      'DESCRIBE FUNCTIONS',
      'DESCRIBE AGGREGATES',
      `DESCRIBE ${keyspace}.t`,
    ];

    it(
      'no DESCRIBE form shows a backend address, host id or token, with or without a user keyspace in use',
      async () => {
        const findings: string[] = [];
        for (const use of [undefined, keyspace, 'system']) {
          const session = await Cql.open(running.address);
          try {
            if (use !== undefined) expect((await session.query(`USE ${use}`)).error).toBeUndefined();
            for (const statement of describes) {
              const answer = await session.query(statement);
              for (const leak of leaks(answer, identity)) findings.push(`${statement} (USE ${use}): ${leak}`);
            }
            const cluster = await session.query('DESCRIBE CLUSTER');
            expect(cluster.error).toBeUndefined();
            const ownership = cluster.rows?.[0]?.range_ownership as Map<string, string[]> | undefined;
            if (use === keyspace) {
              // The virtual ring: the proxy's own tokens, owned by the proxy.
              const own = new Set(running.proxy.topology().members.flatMap((m) => m.tokens));
              expect([...ownership!.keys()].every((t) => own.has(t))).toBe(true);
              expect(new Set([...ownership!.values()].flat())).toEqual(new Set([`/127.0.0.50:${running.proxy.port}`]));
            }
          } finally {
            session.close();
          }
        }
        expect(findings).toEqual([]);
      },
      TIMEOUT,
    );
  });
}
