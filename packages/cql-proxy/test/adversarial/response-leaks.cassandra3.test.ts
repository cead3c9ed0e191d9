// Topology leaks in what a forwarded answer carries besides its rows: response warnings (frame flag
// 0x08) and system.prepared_statements, probed through a proxy on 127.0.0.50 in front of the
// three-node testenv Cassandra (127.0.0.1-3). Each answer must carry no backend address, host id,
// ring token or node count. Then the probes that found nothing (USE system with unqualified names
// in PREPARE / EXECUTE / BATCH, SELECT JSON, tracing, paging states), kept so they stay that way.
// The same warnings without a Cassandra, in every framing: test/proxy/response-warnings.test.ts.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { testServer } from '../../../../scripts/testenv/state.mjs';
import { Consistency } from '../../src/protocol/consistency.js';
import { splitBody } from '../../src/protocol/envelope.js';
import { decodeError } from '../../src/protocol/error-message.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { FrameFlag, Opcode, type Frame } from '../../src/protocol/frame.js';
import type { QueryParameters } from '../../src/protocol/query-parameters.js';
import { encodeBatch, encodeExecute, encodePrepare, encodeQuery, encodeStartup } from '../../src/protocol/requests.js';
import { decodeResult, type Result } from '../../src/protocol/result.js';
import { HIDDEN_TOKEN } from '../../src/proxy/response-warnings.js';
import { murmur3Token } from '../../src/routing/murmur3.js';
import { startProxy, type CassandraEntry, type RunningProxy } from '../proxy/harness.js';
import { answerOf } from './answer.js';
import { RawClient } from '../proxy/raw-client.js';
import { backendIdentity, Cql, leaks, type BackendIdentity } from '../proxy/system-walk.js';

const backend = testServer<CassandraEntry>('cassandra3');
const TIMEOUT = 180_000;
const run = `leaks_${process.pid}`;

/** One connection in a given protocol version and compression, past STARTUP. */
class Probe {
  #stream = 0;
  private constructor(
    readonly raw: RawClient,
    readonly version: 4 | 5,
  ) {}

  static async open(address: string, version: 4 | 5, compression?: 'lz4' | 'snappy'): Promise<Probe> {
    const raw = await RawClient.open(address);
    const options = new Map([['CQL_VERSION', '3.0.0']]);
    if (compression) options.set('COMPRESSION', compression);
    raw.send(version, 0, Opcode.STARTUP, encodeStartup({ options }));
    const ready = await raw.next(0, 60_000);
    if (ready?.opcode !== Opcode.READY) throw new Error(`STARTUP v${version} ${compression ?? ''} answered ${ready?.opcode}`);
    if (version === 5) raw.useSegments(compression === 'lz4');
    else if (compression) raw.useCompression(compression);
    return new Probe(raw, version);
  }

  send(opcode: number, body: Buffer, flags = 0): number {
    const stream = (this.#stream = (this.#stream % 30_000) + 1);
    this.raw.send(this.version, stream, opcode, body, flags);
    return stream;
  }

  async answer(stream: number): Promise<Frame> {
    const frame = await this.raw.next(stream, 60_000);
    if (!frame) throw new Error('the proxy closed the connection');
    return frame;
  }

  request(opcode: number, body: Buffer, flags = 0): Promise<Frame> {
    return this.answer(this.send(opcode, body, flags));
  }

  query(query: string, parameters: Partial<QueryParameters> = {}, flags = 0): Promise<Frame> {
    return this.request(
      Opcode.QUERY,
      encodeQuery({ query, parameters: { consistency: Consistency.ONE, ...parameters } }, this.version),
      flags,
    );
  }

  close(): void {
    this.raw.close();
  }
}

const warningsOf = (frame: Frame): readonly string[] => splitBody(frame).extras.warnings ?? [];
const messageOf = (frame: Frame): Buffer => splitBody(frame).message;
const errorOf = (frame: Frame) => (frame.opcode === Opcode.ERROR ? decodeError(messageOf(frame)) : undefined);
const resultOf = (frame: Frame, version: number): Result => {
  const error = errorOf(frame);
  if (error) throw new Error(`ERROR ${error.code.toString(16)}: ${error.message}`);
  return decodeResult(messageOf(frame), version);
};
const int = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
};

/** One int partition key in each node's range of `ring` (Murmur3: a token belongs to the first ring token at or above it). */
function partitionPerNode(ring: ReadonlySet<string>): number[] {
  const tokens = [...ring].map(BigInt).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const owner = (token: bigint) => tokens.find((t) => token <= t) ?? tokens[0]!;
  const keys = new Map<bigint, number>();
  for (let key = 0; keys.size < tokens.length && key < 10_000; key++) {
    const node = owner(murmur3Token(int(key)));
    if (!keys.has(node)) keys.set(node, key);
  }
  return [...keys.values()];
}

(backend ? describe : describe.skip)('what forwarded answers carry besides rows, through a proxy in front of cassandra3', () => {
  let running: RunningProxy;
  let identity: BackendIdentity;
  const open: Probe[] = [];
  const probe = async (version: 4 | 5 = 4, compression?: 'lz4' | 'snappy') => {
    const p = await Probe.open(running.address, version, compression);
    open.push(p);
    return p;
  };
  /** Every trace of a backend node in an answer: its bytes, its warnings and its error. */
  const found = (frame: Frame) => [
    ...leaks(answerOf(frame, frame.version), identity),
    ...warningsOf(frame).filter((w) => /number of nodes/i.test(w)),
  ];

  beforeAll(async () => {
    identity = await backendIdentity(backend!.contactPoints);
    running = await startProxy(backend!, { host: '127.0.0.50', proxy: { advertise: { address: '127.0.0.50' } } });
  }, TIMEOUT);
  afterAll(async () => {
    const cleanup = open[0] ?? (await Probe.open(running.address, 4));
    await cleanup.query(`DROP KEYSPACE IF EXISTS ${run}_one`).catch(() => undefined);
    for (const p of open) p.close();
    await running?.stop();
  }, TIMEOUT);

  it.each([
    { version: 4 as const, compression: undefined, replication: `'class': 'SimpleStrategy', 'replication_factor': 5` },
    { version: 4 as const, compression: 'lz4' as const, replication: `'class': 'NetworkTopologyStrategy', 'datacenter1': 4` },
    { version: 5 as const, compression: 'lz4' as const, replication: `'class': 'NetworkTopologyStrategy', 'datacenter1': 5` },
  ])(
    'v$version ($compression): CREATE KEYSPACE with a factor above the node count is answered without the count',
    async ({ version, compression, replication }) => {
      const p = await probe(version, compression);
      const keyspace = `${run}_rf_${version}${compression ?? ''}`;
      const answer = await p.query(`CREATE KEYSPACE ${keyspace} WITH replication = {${replication}}`);
      try {
        expect(resultOf(answer, version).kind).toBe('Schema_change');
        expect(found(answer)).toEqual([]);
      } finally {
        await p.query(`DROP KEYSPACE IF EXISTS ${keyspace}`);
      }
    },
    TIMEOUT,
  );

  it(
    "a range read's tombstone warning does not quote the backend's sub-range bounds (its ring tokens); paging states hold none",
    async () => {
      const p = await probe(4, 'lz4');
      const keyspace = `${run}_one`;
      // One replica per range: the coordinator reads each node's range apart, and says which.
      for (const ddl of [
        `CREATE KEYSPACE IF NOT EXISTS ${keyspace} WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`,
        `CREATE TABLE IF NOT EXISTS ${keyspace}.t (k int, c int, v text, PRIMARY KEY (k, c))`,
      ]) {
        const error = errorOf(await p.query(ddl));
        if (error) throw new Error(`${ddl}: ${error.message}`);
      }
      const prepared = resultOf(
        await p.request(Opcode.PREPARE, encodePrepare({ query: `INSERT INTO ${keyspace}.t (k, c, v) VALUES (?, ?, null)` }, 4)),
        4,
      );
      if (prepared.kind !== 'Prepared') throw new Error(`PREPARE answered ${prepared.kind}`);
      // 1,100 cell tombstones in a partition of each node's range (Cassandra's tombstone_warn_threshold
      // is 1,000): the node the proxy sends the scan to warns about the one it reads itself.
      // In windows of 100; a write the busy shared backend timed out is sent again (it writes a tombstone: idempotent).
      const write = (key: number, c: number) =>
        p.send(
          Opcode.EXECUTE,
          encodeExecute({ id: prepared.id, parameters: { consistency: Consistency.ONE, values: [int(key), int(c)] } }, 4),
        );
      for (const key of partitionPerNode(identity.tokens)) {
        for (let from = 0; from < 1_100; from += 100) {
          let pending = Array.from({ length: 100 }, (_, i) => from + i);
          for (let attempt = 1; pending.length > 0; attempt++) {
            const sent = pending.map((c) => ({ c, stream: write(key, c) }));
            pending = [];
            for (const { c, stream } of sent) {
              const error = errorOf(await p.answer(stream));
              if (!error) continue;
              if (attempt >= 5 || (error.code !== ErrorCode.WRITE_TIMEOUT && error.code !== ErrorCode.OVERLOADED))
                throw new Error(error.message);
              pending.push(c);
            }
          }
        }
      }

      const scan = await p.query(`SELECT * FROM ${keyspace}.t`);
      expect(resultOf(scan, 4).kind).toBe('Rows');
      const tombstones = warningsOf(scan).filter((w) => /tombstone/.test(w));
      expect(tombstones).not.toEqual([]);
      expect(tombstones.join('\n')).toContain(HIDDEN_TOKEN);
      expect(found(scan)).toEqual([]);

      const page = await p.query(`SELECT * FROM ${keyspace}.t`, { pageSize: 5 });
      const rows = resultOf(page, 4);
      if (rows.kind !== 'Rows' || !rows.metadata.pagingState) throw new Error('no paging state');
      expect(found(page)).toEqual([]);
    },
    TIMEOUT,
  );

  it(
    "system.prepared_statements and system_views.queries are refused: they hold other clients' statement texts, which may name backend nodes",
    async () => {
      const [first, second] = [...identity.addresses].sort();
      // A direct client of every node prepares a statement naming another node.
      for (const contact of backend!.contactPoints) {
        const direct = await Cql.open(contact);
        try {
          direct.raw.send(
            4,
            7,
            Opcode.PREPARE,
            encodePrepare({ query: `SELECT * FROM system.peers WHERE peer = '${second ?? first}'` }, 4),
          );
          expect((await direct.raw.next(7, 60_000))?.opcode).toBe(Opcode.RESULT);
        } finally {
          direct.close();
        }
      }
      const p = await probe();
      for (const [statement, table] of [
        ['SELECT * FROM system.prepared_statements', 'system.prepared_statements'],
        ['SELECT query_string FROM system."prepared_statements"', 'system.prepared_statements'],
        // Running statements, whose texts may name nodes as well.
        ['SELECT * FROM system_views.queries', 'system_views.queries'],
      ] as const) {
        const answer = await p.query(statement);
        expect(found(answer)).toEqual([]);
        expect(errorOf(answer)?.code).toBe(ErrorCode.INVALID);
        expect(errorOf(answer)?.message).toContain(`${table} is not served through the proxy`);
      }
    },
    TIMEOUT,
  );

  it.each([
    ['v4', 4 as const, {}],
    // (review) A v5 QUERY that names its keyspace took another path, which did not track the USE.
    ['v5, the USE naming a keyspace in its parameters', 5 as const, { keyspace: 'system_schema' }],
  ])(
    'a read sent right behind a USE system, before its answer, is judged in system (pipelined, ten fresh connections; %s)',
    async (_how, version, useParameters) => {
      for (let i = 0; i < 10; i++) {
        const p = await probe(version);
        const use = p.send(
          Opcode.QUERY,
          encodeQuery({ query: 'USE system', parameters: { consistency: Consistency.ONE, ...useParameters } }, version),
        );
        const read = p.send(
          Opcode.QUERY,
          encodeQuery({ query: 'SELECT peer, host_id FROM peers_v2', parameters: { consistency: Consistency.ONE } }, version),
        );
        expect(resultOf(await p.answer(use), version).kind).toBe('Set_keyspace');
        expect(found(await p.answer(read))).toEqual([]);
        p.close();
      }
    },
    TIMEOUT,
  );

  it(
    'a USE run as the EXECUTE of a prepared USE counts too: unqualified names then read the virtual tables',
    async () => {
      const p = await probe(4, 'lz4');
      const prepared = resultOf(await p.request(Opcode.PREPARE, encodePrepare({ query: 'USE system' }, 4)), 4);
      if (prepared.kind !== 'Prepared') throw new Error(`PREPARE answered ${prepared.kind}`);
      const used = await p.request(Opcode.EXECUTE, encodeExecute({ id: prepared.id, parameters: { consistency: Consistency.ONE } }, 4));
      expect(resultOf(used, 4)).toEqual({ kind: 'Set_keyspace', keyspace: 'system' });
      for (const statement of ['SELECT peer FROM peers', 'SELECT host_id, tokens FROM local', 'SELECT * FROM peers_v2']) {
        const answer = await p.query(statement);
        expect(found(answer)).toEqual([]);
        expect(resultOf(answer, 4).kind).toBe('Rows');
      }
      const gossip = await p.query('SELECT * FROM system_views.gossip_info');
      expect(errorOf(gossip)?.message).toContain('system_views.gossip_info is not served through the proxy');
    },
    TIMEOUT,
  );

  it(
    'probes that found nothing: USE system with unqualified names, SELECT JSON, tracing',
    async () => {
      const p = await probe(5, 'lz4');
      expect(resultOf(await p.query('USE system'), 5).kind).toBe('Set_keyspace');
      for (const statement of [
        'SELECT * FROM peers',
        'SELECT peer AS p, host_id FROM peers_v2',
        'SELECT JSON * FROM local',
        'SELECT JSON peer FROM system.peers',
      ]) {
        expect(found(await p.query(statement))).toEqual([]);
      }
      const prepared = resultOf(await p.request(Opcode.PREPARE, encodePrepare({ query: 'SELECT peer, host_id FROM peers' }, 5)), 5);
      if (prepared.kind !== 'Prepared') throw new Error(`PREPARE answered ${prepared.kind}`);
      expect(
        found(
          await p.request(
            Opcode.EXECUTE,
            encodeExecute(
              { id: prepared.id, resultMetadataId: prepared.resultMetadataId, parameters: { consistency: Consistency.ONE } },
              5,
            ),
          ),
        ),
      ).toEqual([]);
      const batch = await p.request(
        Opcode.BATCH,
        encodeBatch(
          {
            type: 1,
            consistency: Consistency.ONE,
            statements: [{ kind: 'query', query: "UPDATE local SET rack = 'r' WHERE key = 'local'", values: [] }],
          },
          5,
        ),
      );
      expect(found(batch)).toEqual([]);
      expect(errorOf(batch)?.message).toMatch(/system\.local cannot be written through the proxy/);
      // A traced forwarded read: its answer carries a session id, and the trace itself is refused.
      const traced = await p.query('SELECT keyspace_name FROM system_schema.keyspaces', {}, FrameFlag.TRACING);
      expect(splitBody(traced).extras.tracingId).toBeDefined();
      expect(found(traced)).toEqual([]);
      const trace = await p.query(`SELECT * FROM system_traces.events WHERE session_id = ${splitBody(traced).extras.tracingId}`);
      expect(errorOf(trace)?.code).toBe(ErrorCode.INVALID);
      expect(found(trace)).toEqual([]);
    },
    TIMEOUT,
  );
});
