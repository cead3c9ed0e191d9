// DESIGN §2.2 against each protocol version, over bare CQL connections: three proxies (one
// membership of three) in front of the testenv Cassandra, every way drivers and tools write a read
// of system.local / system.peers / system.peers_v2, and proof that none of it reaches the backend.
//
// The proxies listen on 127.0.0.2-4 (one port, as drivers dial every peer on one port), so
// 127.0.0.1 is the backend's address alone, and reach the backend through a recording TCP relay:
// every request frame the proxies' client connections send to Cassandra is decoded and kept.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { testServer } from '../../../../scripts/testenv/state.mjs';
import { decodeCell, type CellValue } from '../../src/protocol/cells.js';
import { Consistency } from '../../src/protocol/consistency.js';
import { decodeError, type ErrorMessage } from '../../src/protocol/error-message.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { FrameDecoder, Opcode, type Frame } from '../../src/protocol/frame.js';
import { addressToBytes } from '../../src/protocol/inet.js';
import type { BoundValue, QueryParameters } from '../../src/protocol/query-parameters.js';
import {
  decodeExecute,
  decodePrepare,
  decodeQuery,
  encodeExecute,
  encodePrepare,
  encodeQuery,
  encodeStartup,
  decodeStartup,
} from '../../src/protocol/requests.js';
import { decodeResult, type ColumnSpec, type Result } from '../../src/protocol/result.js';
import { SegmentedFrameDecoder } from '../../src/protocol/segment.js';
import { DataTypeId } from '../../src/protocol/types.js';
import { Writer } from '../../src/protocol/writer.js';
import { startProxy, startStaticCluster, type CassandraEntry, type RunningProxy, type StaticCluster } from './harness.js';
import { RawClient } from './raw-client.js';

const backend = testServer<CassandraEntry>('cassandra');
const TIMEOUT = 120_000;

// ---------------------------------------------------------------------------------------------
// A client connection at one protocol version, over RawClient (v5: segment framing after READY).

type Row = Record<string, CellValue>;
type Answer =
  | { kind: 'rows'; columns: readonly ColumnSpec[]; rows: Row[]; body: Buffer }
  | { kind: 'error'; error: ErrorMessage }
  | { kind: 'result'; result: Result; body: Buffer };

/** Every response body any matrix client received: searched at the end for the backend's identity. */
const received: Buffer[] = [];
/** Every inet cell any matrix client decoded. */
const inetCells = new Set<string>();

class Cql {
  #stream = 0;
  private constructor(
    readonly raw: RawClient,
    readonly version: number,
  ) {}

  static async open(address: string, version: number): Promise<Cql> {
    return new Cql(await RawClient.open(address), version);
  }

  /** STARTUP; resolves with the answer's opcode (READY, or ERROR with its message). */
  async startup(): Promise<{ opcode: number; error?: ErrorMessage }> {
    const frame = await this.#request(Opcode.STARTUP, encodeStartup({ options: new Map([['CQL_VERSION', '3.0.0']]) }));
    if (this.version >= 5 && frame.opcode === Opcode.READY) this.raw.useSegments(false);
    return frame.opcode === Opcode.ERROR ? { opcode: frame.opcode, error: decodeError(frame.body) } : { opcode: frame.opcode };
  }

  async #request(opcode: number, body: Buffer): Promise<Frame> {
    const stream = (this.#stream = (this.#stream % 30_000) + 1);
    this.raw.send(this.version, stream, opcode, body);
    const frame = await this.raw.next(stream);
    if (!frame) throw new Error(`connection closed before the answer to opcode 0x${opcode.toString(16)}`);
    received.push(Buffer.from(frame.body));
    return frame;
  }

  #answer(frame: Frame): Answer {
    if (frame.opcode === Opcode.ERROR) return { kind: 'error', error: decodeError(frame.body) };
    expect(frame.opcode).toBe(Opcode.RESULT);
    const result = decodeResult(frame.body, this.version);
    if (result.kind !== 'Rows') return { kind: 'result', result, body: frame.body };
    const columns = result.metadata.columns ?? [];
    const rows = result.rows.map((cells) => Object.fromEntries(columns.map((c, i) => [c.name, decodeCell(c.type, cells[i] ?? null)])));
    for (const row of rows)
      columns.forEach((c) => c.type.id === DataTypeId.INET && row[c.name] !== null && inetCells.add(String(row[c.name])));
    return { kind: 'rows', columns, rows, body: frame.body };
  }

  async query(query: string, parameters: Partial<QueryParameters> = {}): Promise<Answer> {
    const body = encodeQuery({ query, parameters: { consistency: Consistency.ONE, ...parameters } }, this.version);
    return this.#answer(await this.#request(Opcode.QUERY, body));
  }

  async prepare(query: string, keyspace?: string): Promise<Extract<Result, { kind: 'Prepared' }> | ErrorMessage> {
    const body = encodePrepare(keyspace === undefined ? { query } : { query, keyspace }, this.version);
    const answer = this.#answer(await this.#request(Opcode.PREPARE, body));
    if (answer.kind === 'error') return answer.error;
    if (answer.kind !== 'result' || answer.result.kind !== 'Prepared') throw new Error(`PREPARE answered ${answer.kind}`);
    return answer.result;
  }

  async execute(prepared: Extract<Result, { kind: 'Prepared' }>, parameters: Partial<QueryParameters> = {}): Promise<Answer> {
    const body = encodeExecute(
      {
        id: prepared.id,
        ...(this.version >= 5 ? { resultMetadataId: prepared.resultMetadataId! } : {}),
        parameters: { consistency: Consistency.ONE, ...parameters },
      },
      this.version,
    );
    return this.#answer(await this.#request(Opcode.EXECUTE, body));
  }

  close(): void {
    this.raw.close();
  }
}

function rows(answer: Answer): Row[] {
  if (answer.kind === 'error') throw new Error(`expected rows, got error 0x${answer.error.code.toString(16)}: ${answer.error.message}`);
  if (answer.kind !== 'rows') throw new Error(`expected rows, got a ${answer.kind} result`);
  return answer.rows;
}

function columnsOf(answer: Answer): readonly ColumnSpec[] {
  rows(answer);
  return (answer as Extract<Answer, { kind: 'rows' }>).columns;
}

function invalid(answer: Answer): string {
  if (answer.kind !== 'error') throw new Error(`expected INVALID, got ${answer.kind}`);
  expect(answer.error.code).toBe(ErrorCode.INVALID);
  return answer.error.message;
}

const shape = (columns: readonly ColumnSpec[]) => columns.map((c) => ({ name: c.name, type: c.type }));
/** Not a system table (no keyspace): forwarded on purpose, and so expected at the backend. */
const BARE_LOCAL = 'SELECT * FROM local';
const inet = (address: string): BoundValue => addressToBytes(address);
const int = (n: number): BoundValue => new Writer(4).writeInt(n).finish();

// ---------------------------------------------------------------------------------------------
// A relay in front of the backend that decodes what the proxies send it. The proxies' control
// connection (the one that REGISTERs: it reads the real system tables by design) is told apart
// from the per-client connections, which must never carry a system-table statement.

interface Sent {
  readonly connection: number;
  readonly opcode: number;
  readonly text?: string;
  readonly id?: string;
}

class RecordingRelay {
  readonly sent: Sent[] = [];
  readonly control = new Set<number>();
  readonly #sockets = new Set<Socket>();
  #next = 0;
  server: Server | undefined;
  port = 0;

  constructor(readonly target: { host: string; port: number }) {}

  async start(): Promise<void> {
    this.server = createServer((client) => this.#accept(client));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as { port: number }).port;
  }

  #accept(client: Socket): void {
    const connection = ++this.#next;
    const upstream = connect(this.target);
    this.#sockets.add(client).add(upstream);
    let decoder: { push(chunk: Buffer): Frame[] } = new FrameDecoder();
    client.on('data', (chunk: Buffer) => {
      upstream.write(chunk);
      let frames: Frame[] = [];
      try {
        frames = decoder.push(chunk);
      } catch {
        this.sent.push({ connection, opcode: -1 }); // undecodable: flagged, never ignored
      }
      for (const f of frames) {
        this.#record(connection, f);
        // v5: everything after STARTUP travels in segments (the proxy waits for the answer first).
        if (f.opcode === Opcode.STARTUP && f.version >= 5) {
          decoder = new SegmentedFrameDecoder({ lz4: decodeStartup(f.body).options.get('COMPRESSION') === 'lz4' });
        }
      }
    });
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  }

  #record(connection: number, f: Frame): void {
    if (f.opcode === Opcode.REGISTER) this.control.add(connection);
    try {
      if (f.opcode === Opcode.QUERY) this.sent.push({ connection, opcode: f.opcode, text: decodeQuery(f.body, f.version).query });
      else if (f.opcode === Opcode.PREPARE) this.sent.push({ connection, opcode: f.opcode, text: decodePrepare(f.body, f.version).query });
      else if (f.opcode === Opcode.EXECUTE)
        this.sent.push({ connection, opcode: f.opcode, id: decodeExecute(f.body, f.version).id.toString('hex') });
      else this.sent.push({ connection, opcode: f.opcode });
    } catch {
      this.sent.push({ connection, opcode: f.opcode, text: '<undecodable>' });
    }
  }

  /** What the proxies' client connections (not the control connections) sent. */
  clientTraffic(): Sent[] {
    return this.sent.filter((s) => !this.control.has(s.connection));
  }

  async stop(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

// ---------------------------------------------------------------------------------------------

(backend ? describe : describe.skip)('system tables (DESIGN §2.2) over every protocol version', () => {
  const ids = ['proxy-a', 'proxy-b', 'proxy-c'];
  let cluster: StaticCluster | undefined;
  /** The one native port all three listen on. */
  let port: number;
  const hostOf = (id: string) => cluster!.hostOf(id);
  let relay: RecordingRelay;
  /** The backend as a direct connection sees it. */
  const real: { local: Row; localColumns: readonly ColumnSpec[]; schemaColumns: string[]; hostId: string; address: string } = {
    local: {},
    localColumns: [],
    schemaColumns: [],
    hostId: '',
    address: '',
  };
  /** host id and tokens of each member, from the proxies' own /topology view. */
  const members = new Map<string, { hostId: string; tokens: string[]; address: string }>();
  /** Prepared ids the proxies handed out for system-table statements. */
  const systemIds = new Set<string>();

  beforeAll(async () => {
    const [host, nativePort] = backend!.contactPoints[0]!.split(':');
    relay = new RecordingRelay({ host: host!, port: Number(nativePort) });
    await relay.start();

    // The real server's system.local, and its schema of that table, over a direct connection.
    const direct = await Cql.open(backend!.contactPoints[0]!, 4);
    expect((await direct.startup()).opcode).toBe(Opcode.READY);
    const local = await direct.query("SELECT * FROM system.local WHERE key='local'");
    real.local = rows(local)[0]!;
    real.localColumns = columnsOf(local);
    real.hostId = String(real.local.host_id);
    real.address = String(real.local.rpc_address);
    real.schemaColumns = rows(
      await direct.query("SELECT column_name FROM system_schema.columns WHERE keyspace_name = 'system' AND table_name = 'local'"),
    )
      .map((r) => String(r.column_name))
      .sort();
    direct.close();
    received.length = 0;
    inetCells.clear();

    // Every proxy up in every proxy's view, so each system.peers lists the other two.
    cluster = await startStaticCluster({ ...backend!, contactPoints: [`127.0.0.1:${relay.port}`] }, { ids, name: 'matrix' });
    port = cluster.port('proxy-a');
    for (const m of cluster.proxies.get('proxy-a')!.proxy.topology().members) {
      members.set(m.id, { hostId: m.hostId, tokens: [...m.tokens], address: m.address });
    }
  }, TIMEOUT);

  afterAll(async () => {
    await cluster?.stop();
    await relay?.stop();
  }, TIMEOUT);

  const address = (id: string) => cluster!.endpoint(id);

  const matrix = (version: number) => {
    let cql: Cql;
    const open = async (id = 'proxy-a') => {
      const c = await Cql.open(address(id), version);
      const ready = await c.startup();
      if (ready.opcode !== Opcode.READY) throw new Error(`v${version} STARTUP: ${ready.error?.message ?? ready.opcode}`);
      return c;
    };

    beforeAll(async () => {
      cql = await open();
    }, TIMEOUT);
    afterAll(() => cql?.close());

    it("SELECT * FROM system.local WHERE key='local': the real columns, our node, the backend's software", async () => {
      const answer = await cql.query("SELECT * FROM system.local WHERE key='local'");
      // Exactly the real server's columns and types, in its order; and its schema's column set.
      expect(shape(columnsOf(answer))).toEqual(shape(real.localColumns));
      expect(
        columnsOf(answer)
          .map((c) => c.name)
          .sort(),
      ).toEqual(real.schemaColumns);
      expect(columnsOf(answer).every((c) => c.keyspace === 'system' && c.table === 'local')).toBe(true);
      const [row, ...more] = rows(answer);
      expect(more).toHaveLength(0);
      expect(row).toMatchObject({
        key: 'local',
        rpc_address: hostOf('proxy-a'),
        broadcast_address: hostOf('proxy-a'),
        listen_address: hostOf('proxy-a'),
        release_version: real.local.release_version,
        cql_version: real.local.cql_version,
        cluster_name: real.local.cluster_name,
        partitioner: real.local.partitioner,
        data_center: real.local.data_center,
        host_id: members.get('proxy-a')!.hostId,
      });
      expect(row!.host_id).not.toBe(real.hostId);
      expect([...(row!.tokens as string[])].sort()).toEqual([...members.get('proxy-a')!.tokens].sort());
      expect((row!.tokens as string[]).length).toBeGreaterThan(0);
    });

    it('SELECT * FROM system.peers: the two other proxies, never the backend', async () => {
      const peers = rows(await cql.query('SELECT * FROM system.peers'));
      expect(peers.map((p) => p.peer).sort()).toEqual([hostOf('proxy-b'), hostOf('proxy-c')]);
      for (const p of peers) {
        const id = ids.find((i) => hostOf(i) === p.peer)!;
        expect(p).toMatchObject({ rpc_address: hostOf(id), host_id: members.get(id)!.hostId, data_center: real.local.data_center });
        expect([...(p.tokens as string[])].sort()).toEqual([...members.get(id)!.tokens].sort());
        expect(p.host_id).not.toBe(real.hostId);
        expect([p.peer, p.rpc_address, p.preferred_ip]).not.toContain(real.address);
      }
    });

    it('SELECT peer, rpc_address FROM system.peers: just those columns', async () => {
      const answer = await cql.query('SELECT peer, rpc_address FROM system.peers');
      expect(columnsOf(answer).map((c) => [c.name, c.type.id])).toEqual([
        ['peer', DataTypeId.INET],
        ['rpc_address', DataTypeId.INET],
      ]);
      expect(rows(answer)).toEqual(
        expect.arrayContaining([
          { peer: hostOf('proxy-b'), rpc_address: hostOf('proxy-b') },
          { peer: hostOf('proxy-c'), rpc_address: hostOf('proxy-c') },
        ]),
      );
      expect(rows(answer)).toHaveLength(2);
    });

    it('WHERE peer = ? (positional) and WHERE peer = :address (named) pick the one row', async () => {
      const c = hostOf('proxy-c');
      const positional = rows(await cql.query('SELECT * FROM system.peers WHERE peer = ?', { values: [inet(c)] }));
      expect(positional.map((r) => r.peer)).toEqual([c]);
      const named = rows(
        await cql.query('SELECT * FROM system.peers WHERE peer = :address', { values: [inet(c)], valueNames: ['address'] }),
      );
      expect(named.map((r) => r.peer)).toEqual([c]);
      expect(named[0]!.host_id).toBe(members.get('proxy-c')!.hostId);
      // The receiving node is not its own peer, and the backend's address is no peer at all.
      expect(rows(await cql.query('SELECT * FROM system.peers WHERE peer = ?', { values: [inet(hostOf('proxy-a'))] }))).toEqual([]);
      expect(rows(await cql.query("SELECT * FROM system.peers WHERE peer = '127.0.0.1'"))).toEqual([]);
      // IN, listed or as one bound list.
      const both = [hostOf('proxy-b'), hostOf('proxy-c')];
      expect(rows(await cql.query(`SELECT peer FROM system.peers WHERE peer IN ('${both[0]}', '127.0.0.1')`))).toEqual([{ peer: both[0] }]);
      expect(
        rows(await cql.query('SELECT peer FROM system.peers WHERE peer IN (?, ?)', { values: both.map(inet) }))
          .map((r) => r.peer)
          .sort(),
      ).toEqual(both);
      // A literal, as cqlsh users write it.
      expect(rows(await cql.query(`SELECT peer FROM system.peers WHERE peer = '${hostOf('proxy-b')}'`))).toEqual([
        { peer: hostOf('proxy-b') },
      ]);
    });

    it('the same through PREPARE + EXECUTE, positional and named', async () => {
      const b = hostOf('proxy-b');
      const positional = await cql.prepare('SELECT * FROM system.peers WHERE peer = ?');
      if (!('id' in positional)) throw new Error(positional.message);
      systemIds.add(positional.id.toString('hex'));
      expect(positional.metadata.columns.map((c) => [c.name, c.type.id])).toEqual([['peer', DataTypeId.INET]]);
      if (version >= 4) expect(positional.metadata.pkIndexes).toEqual([0]);
      expect(shape(positional.resultMetadata.columns ?? [])).toEqual(shape(columnsOf(await cql.query('SELECT * FROM system.peers'))));
      expect(rows(await cql.execute(positional, { values: [inet(b)] })).map((r) => r.peer)).toEqual([b]);

      const named = await cql.prepare('SELECT peer, host_id FROM system.peers WHERE peer = :address');
      if (!('id' in named)) throw new Error(named.message);
      systemIds.add(named.id.toString('hex'));
      expect(named.metadata.columns.map((c) => c.name)).toEqual(['address']);
      const byName = rows(await cql.execute(named, { values: [inet(b)], valueNames: ['address'] }));
      expect(byName).toEqual([{ peer: b, host_id: members.get('proxy-b')!.hostId }]);
      const byPosition = rows(await cql.execute(named, { values: [inet(hostOf('proxy-c'))] }));
      expect(byPosition).toEqual([{ peer: hostOf('proxy-c'), host_id: members.get('proxy-c')!.hostId }]);

      // Another proxy hands out the same id for the same statement (deterministic ids).
      const other = await open('proxy-b');
      const again = await other.prepare('SELECT * FROM system.peers WHERE peer = ?');
      other.close();
      expect('id' in again && again.id.equals(positional.id)).toBe(true);
    });

    it("system.peers_v2 with peer_port and native_port, and the Java driver's refresh-one-node statement", async () => {
      const all = rows(await cql.query('SELECT peer, peer_port, native_address, native_port, host_id FROM system.peers_v2'));
      expect(all.map((r) => r.peer).sort()).toEqual([hostOf('proxy-b'), hostOf('proxy-c')]);
      for (const r of all) expect(r).toMatchObject({ peer_port: port, native_port: port, native_address: r.peer });

      const full = await cql.query('SELECT * FROM system.peers_v2');
      expect(columnsOf(full).map((c) => c.name)).toEqual(expect.arrayContaining(['peer', 'peer_port', 'native_address', 'native_port']));

      const refresh = await cql.prepare('SELECT * FROM system.peers_v2 WHERE peer = :address AND peer_port = :port');
      if (!('id' in refresh)) throw new Error(refresh.message);
      systemIds.add(refresh.id.toString('hex'));
      expect(refresh.metadata.columns.map((c) => [c.name, c.type.id])).toEqual([
        ['address', DataTypeId.INET],
        ['port', DataTypeId.INT],
      ]);
      for (const id of ['proxy-c', 'proxy-b']) {
        const [first, ...rest] = rows(
          await cql.execute(refresh, { values: [inet(hostOf(id)), int(port)], valueNames: ['address', 'port'] }),
        );
        expect(rest).toEqual([]);
        expect(first).toMatchObject({ peer: hostOf(id), peer_port: port, host_id: members.get(id)!.hostId });
      }
      expect(
        rows(await cql.execute(refresh, { values: [inet(hostOf('proxy-b')), int(port + 1)], valueNames: ['address', 'port'] })),
      ).toEqual([]);
    });

    it('count(*) is one bigint row; LIMIT 1 keeps one row', async () => {
      const count = await cql.query('SELECT count(*) FROM system.peers');
      expect(columnsOf(count).map((c) => [c.name, c.type.id])).toEqual([['count', DataTypeId.BIGINT]]);
      expect(rows(count)).toEqual([{ count: 2n }]);
      expect(rows(await cql.query('SELECT count(*) FROM system.local'))).toEqual([{ count: 1n }]);
      expect(rows(await cql.query('SELECT * FROM system.peers LIMIT 1'))).toHaveLength(1);
      expect(rows(await cql.query('SELECT peer FROM system.peers LIMIT ?', { values: [int(1)] }))).toHaveLength(1);
    });

    it("ALLOW FILTERING on a non-key column (and without it, Cassandra's refusal)", async () => {
      const c = hostOf('proxy-c');
      expect(rows(await cql.query(`SELECT peer FROM system.peers WHERE rpc_address = '${c}' ALLOW FILTERING`))).toEqual([{ peer: c }]);
      expect(invalid(await cql.query(`SELECT peer FROM system.peers WHERE rpc_address = '${c}'`))).toMatch(/ALLOW FILTERING/);
      expect(rows(await cql.query("SELECT * FROM system.local WHERE key = 'local' ALLOW FILTERING"))).toHaveLength(1);
    });

    it('USING TIMEOUT 10s is accepted', async () => {
      expect(rows(await cql.query("SELECT * FROM system.local WHERE key = 'local' USING TIMEOUT 10s"))).toHaveLength(1);
      expect(rows(await cql.query('SELECT peer FROM system.peers USING TIMEOUT 10s'))).toHaveLength(2);
    });

    it('quoted, mixed-case and commented names, trailing ;', async () => {
      expect(rows(await cql.query('SELECT * FROM "system"."peers"'))).toHaveLength(2);
      const upper = rows(await cql.query('SELECT * FROM SYSTEM.LOCAL'));
      expect(upper.map((r) => r.rpc_address)).toEqual([hostOf('proxy-a')]);
      const commented = rows(await cql.query('/* c */ select * from system.local;'));
      expect(commented.map((r) => r.host_id)).toEqual([members.get('proxy-a')!.hostId]);
      expect(rows(await cql.query('-- why\nSELECT peer FROM system . "peers_v2" ;'))).toHaveLength(2);
    });

    if (version >= 5)
      it('v5: the keyspace from the QUERY and PREPARE keyspace flag', async () => {
        const local = rows(await cql.query('SELECT rpc_address, host_id FROM local', { keyspace: 'system' }));
        expect(local).toEqual([{ rpc_address: hostOf('proxy-a'), host_id: members.get('proxy-a')!.hostId }]);
        const prepared = await cql.prepare('SELECT peer FROM peers_v2 WHERE peer = ?', 'system');
        if (!('id' in prepared)) throw new Error(prepared.message);
        systemIds.add(prepared.id.toString('hex'));
        expect(rows(await cql.execute(prepared, { values: [inet(hostOf('proxy-c'))] }))).toEqual([{ peer: hostOf('proxy-c') }]);
        // A write that names no keyspace in its text, system by the flag: refused like any system-table
        // write (before: forwarded, and the conditional answered with the backend's own host_id).
        const write = await cql.query("UPDATE local SET rack = 'r' WHERE key = 'local' IF host_id = 00000000-0000-0000-0000-000000000000", {
          keyspace: 'system',
        });
        expect(write.kind === 'error' && write.error.message).toMatch(/cannot be written through the proxy/);
        // Without the flag (and no USE), "local" is no system table: the backend refuses it.
        const bare = await cql.query(BARE_LOCAL);
        expect(bare.kind === 'error' && bare.error.code).toBe(ErrorCode.INVALID);
      });

    it('the keyspace from USE system: SELECT * FROM local / peers', async () => {
      const used = await open('proxy-b');
      const set = await used.query('USE system');
      expect(set.kind === 'result' && set.result.kind === 'Set_keyspace' && set.result.keyspace).toBe('system');
      const local = rows(await used.query('SELECT * FROM local'));
      expect(local.map((r) => [r.rpc_address, r.host_id])).toEqual([[hostOf('proxy-b'), members.get('proxy-b')!.hostId]]);
      expect(
        rows(await used.query('SELECT peer FROM peers'))
          .map((r) => r.peer)
          .sort(),
      ).toEqual([hostOf('proxy-a'), hostOf('proxy-c')]);
      const prepared = await used.prepare('SELECT peer FROM peers WHERE peer = ?');
      if (!('id' in prepared)) throw new Error(prepared.message);
      systemIds.add(prepared.id.toString('hex'));
      expect(rows(await used.execute(prepared, { values: [inet(hostOf('proxy-a'))] }))).toEqual([{ peer: hostOf('proxy-a') }]);
      used.close();
    });

    it('a system-table read longer than the classified prefix is refused, wherever it names the table', async () => {
      // 70 KB of columns before FROM: "system" lies past the 64 KiB the proxy classifies (before:
      // forwarded, and the backend answered with its own peers).
      const long = `SELECT ${'peer, '.repeat(14_000)}peer FROM system.peers`;
      expect(invalid(await cql.query(long))).toMatch(/may be \d+ bytes long at most/);
    });

    it('an unknown column and an unsupported construct are INVALID with a clear message', async () => {
      expect(invalid(await cql.query('SELECT no_such_column FROM system.local'))).toMatch(/no_such_column/);
      expect(invalid(await cql.query('SELECT * FROM system.peers WHERE no_such_column = 1 ALLOW FILTERING'))).toMatch(/no_such_column/);
      expect(invalid(await cql.query("SELECT * FROM system.peers WHERE peer > '127.0.0.3' ALLOW FILTERING"))).toMatch(
        /not supported.*system\.peers/,
      );
      expect(invalid(await cql.query('SELECT * FROM system.peers WHERE token(peer) > 0'))).toMatch(/not supported/);
      expect(invalid(await cql.query('SELECT JSON * FROM system.local'))).toMatch(/JSON is not supported/);
      expect(invalid(await cql.query('SELECT * FROM system.peers ORDER BY peer'))).toMatch(/ORDER BY is not supported/);
      const prepared = await cql.prepare('SELECT no_such_column FROM system.peers');
      expect('code' in prepared && prepared.code).toBe(ErrorCode.INVALID);
      expect('message' in prepared && prepared.message).toMatch(/no_such_column/);
    });
  };

  describe('v3', () => matrix(3));
  describe('v4', () => matrix(4));
  describe('v5 (segment framing)', () => matrix(5));

  it('nothing about these tables ever reached the backend', async () => {
    // Non-vacuous: a statement the proxy does not answer itself is seen by the relay.
    const cql = await Cql.open(address('proxy-c'), 4);
    expect((await cql.startup()).opcode).toBe(Opcode.READY);
    const marker = `SELECT keyspace_name FROM system_schema.keyspaces WHERE keyspace_name = 'system' /* matrix ${Date.now()} */`;
    expect(rows(await cql.query(marker))).toEqual([{ keyspace_name: 'system' }]);
    cql.close();

    const traffic = relay.clientTraffic();
    expect(traffic.some((s) => s.text === marker)).toBe(true);
    expect(traffic.some((s) => s.opcode === Opcode.STARTUP)).toBe(true);
    expect(relay.control.size).toBeGreaterThanOrEqual(3); // each proxy's control connection, which reads the real tables
    const leaked = traffic.filter(
      (s) =>
        s.opcode === -1 ||
        (s.text !== undefined && s.text !== BARE_LOCAL && /\b(local|peers|peers_v2)\b/i.test(s.text)) ||
        (s.id !== undefined && systemIds.has(s.id)),
    );
    expect(leaked).toEqual([]);
    expect(systemIds.size).toBeGreaterThan(0);

    // Nor did the backend's identity come back: its host id in no answer, its address in no inet cell.
    const realId = Buffer.from(real.hostId.replace(/-/g, ''), 'hex');
    expect(received.length).toBeGreaterThan(20);
    expect(received.filter((body) => body.includes(realId))).toEqual([]);
    expect([...inetCells].sort()).toEqual(ids.map(hostOf).sort());
  });
});

(backend ? describe : describe.skip)('peersV2: false (for drivers of old backends)', () => {
  let running: RunningProxy;
  beforeAll(async () => {
    running = await startProxy(backend!, { id: 'proxy-old', host: '127.0.0.5', proxy: { peersV2: false } });
  }, TIMEOUT);
  afterAll(async () => running?.stop(), TIMEOUT);

  it.each([4, 5])('v%i: system.peers_v2 is an unconfigured table, system.peers still answers', async (version) => {
    const cql = await Cql.open(running.address, version);
    expect((await cql.startup()).opcode).toBe(Opcode.READY);
    expect(invalid(await cql.query('SELECT * FROM system.peers_v2'))).toMatch(/unconfigured table peers_v2/);
    const prepared = await cql.prepare('SELECT * FROM system.peers_v2 WHERE peer = :address AND peer_port = :port');
    expect('code' in prepared && prepared.code).toBe(ErrorCode.INVALID);
    expect(rows(await cql.query('SELECT * FROM system.peers'))).toEqual([]);
    expect(rows(await cql.query('SELECT rpc_address FROM system.local'))).toEqual([{ rpc_address: '127.0.0.5' }]);
    cql.close();
  });
});
