// Topology-leak probes beyond plain reads of the system tables (system-walk covers those): ways a
// client of the proxy once learnt a backend node's host id or address. Each probe is sent through
// a proxy on 127.0.0.50 in front of the three-node testenv Cassandra (127.0.0.1-3), and its answer
// must carry no backend address, host id or token, and must be the proxy's own refusal.
//
// Every write here is conditional on a host id no node has, so even a proxy that forwards it
// changes nothing on the shared backend (the old proxy did forward them).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { testServer } from '../../../../scripts/testenv/state.mjs';
import { Consistency } from '../../src/protocol/consistency.js';
import { decodeError } from '../../src/protocol/error-message.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { Opcode } from '../../src/protocol/frame.js';
import { encodeBatch, encodeExecute, encodePrepare } from '../../src/protocol/requests.js';
import { decodeResult } from '../../src/protocol/result.js';
import { startProxy, type CassandraEntry, type RunningProxy } from '../proxy/harness.js';
import { backendIdentity, Cql, leaks, type BackendIdentity } from '../proxy/system-walk.js';

const backend = testServer<CassandraEntry>('cassandra3');
const TIMEOUT = 120_000;
const NO_HOST = '00000000-0000-0000-0000-000000000000';

/** Conditional writes: Cassandra answers a write that did not apply with the row it found. */
const conditionalWrites = [
  `UPDATE system.local SET rack = 'r' WHERE key = 'local' IF host_id = ${NO_HOST}`,
  `UPDATE system.peers SET rack = 'r' WHERE peer = '127.0.0.2' IF host_id = ${NO_HOST}`,
  `UPDATE system.peers_v2 SET rack = 'r' WHERE peer = '127.0.0.3' AND peer_port = 7000 IF host_id = ${NO_HOST}`,
  `DELETE FROM "system".peers WHERE peer = '127.0.0.1' IF host_id = ${NO_HOST}`,
  `/* c */ update SYSTEM.local USING TTL 10 SET rack = 'r' WHERE key = 'local' IF rack = 'no-such-rack'`,
  `UPDATE system_distributed.view_build_status SET status = 'x' WHERE keyspace_name = 'k' AND view_name = 'v' AND host_id = ${NO_HOST} IF status = 'no'`,
];

/** Reads the old lexer could not tokenize, so the proxy forwarded them unchecked. */
const unreadableReads = [
  'SELECT peer, 4 / 2 FROM system.peers',
  'SELECT peer, 5 % 2 FROM system.peers',
  'SELECT address, 4 / 2 FROM system_views.gossip_info',
  'SELECT peer, 1 & 2 FROM system.peers',
];

(backend ? describe : describe.skip)('topology-leak probes through a proxy in front of cassandra3', () => {
  let running: RunningProxy;
  let identity: BackendIdentity;
  let cql: Cql;
  let stream = 100;

  beforeAll(async () => {
    identity = await backendIdentity(backend!.contactPoints);
    running = await startProxy(backend!, { host: '127.0.0.50', proxy: { advertise: { address: '127.0.0.50' } } });
    cql = await Cql.open(running.address);
  }, TIMEOUT);
  afterAll(async () => {
    cql?.close();
    await running?.stop();
  }, TIMEOUT);

  /** Sends one request on the probe connection; the answer as the walk's leak check reads it. */
  const request = async (opcode: number, body: Buffer) => {
    const s = ++stream;
    cql.raw.send(4, s, opcode, body);
    const frame = await cql.raw.next(s, 60_000);
    if (!frame) throw new Error('the proxy closed the connection');
    if (frame.opcode === Opcode.ERROR) return { body: frame.body, error: decodeError(frame.body) };
    const result = decodeResult(frame.body, 4);
    return { body: frame.body, result };
  };

  it.each(conditionalWrites)('a conditional write is refused, not answered with the real row: %s', async (statement) => {
    for (const answer of [await cql.query(statement), await request(Opcode.PREPARE, encodePrepare({ query: statement }, 4))]) {
      expect(leaks(answer, identity)).toEqual([]);
      expect(answer.error?.code).toBe(ErrorCode.INVALID);
      expect(answer.error?.message).toMatch(/cannot be written through the proxy/);
    }
    const batch = await request(
      Opcode.BATCH,
      encodeBatch({ type: 0, consistency: Consistency.ONE, statements: [{ kind: 'query', query: statement, values: [] }] }, 4),
    );
    expect(leaks(batch, identity)).toEqual([]);
    expect(batch.error?.message).toMatch(/cannot be written through the proxy/);
  });

  it('a conditional write inside BEGIN BATCH ... APPLY BATCH is refused', async () => {
    const answer = await cql.query(`BEGIN BATCH ${conditionalWrites[0]}; APPLY BATCH`);
    expect(leaks(answer, identity)).toEqual([]);
    expect(answer.error?.message).toMatch(/system\.local cannot be written through the proxy/);
  });

  it.each(unreadableReads)('a read the proxy cannot tokenize is never forwarded: %s', async (statement) => {
    for (const answer of [await cql.query(statement), await request(Opcode.PREPARE, encodePrepare({ query: statement }, 4))]) {
      expect(leaks(answer, identity)).toEqual([]);
      expect(answer.error?.code).toBe(ErrorCode.INVALID);
    }
  });

  it(
    'a BATCH naming a statement the backend prepared for a direct client is UNPREPARED, as an EXECUTE is',
    async () => {
      const direct = await Cql.open(backend!.contactPoints[0]!);
      try {
        const statement = `UPDATE system.local SET rack = 'r' WHERE key = 'local' IF host_id = ${NO_HOST}`;
        direct.raw.send(4, 7, Opcode.PREPARE, encodePrepare({ query: statement }, 4));
        const prepared = decodeResult((await direct.raw.next(7))!.body, 4);
        if (prepared.kind !== 'Prepared') throw new Error(`PREPARE answered ${prepared.kind}`);
        const batch = await request(
          Opcode.BATCH,
          encodeBatch({ type: 0, consistency: Consistency.ONE, statements: [{ kind: 'prepared', id: prepared.id, values: [] }] }, 4),
        );
        expect(leaks(batch, identity)).toEqual([]);
        expect(batch.error?.code).toBe(ErrorCode.UNPREPARED);
        const execute = await request(Opcode.EXECUTE, encodeExecute({ id: prepared.id, parameters: { consistency: Consistency.ONE } }, 4));
        expect(execute.error?.code).toBe(ErrorCode.UNPREPARED);
      } finally {
        direct.close();
      }
    },
    TIMEOUT,
  );

  it(
    'writes and batches to user tables still pass',
    async () => {
      const keyspace = `leak_${process.pid}`;
      const ddl = await cql.query(
        `CREATE KEYSPACE IF NOT EXISTS ${keyspace} WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`,
      );
      expect(ddl.error).toBeUndefined();
      try {
        expect((await cql.query(`CREATE TABLE IF NOT EXISTS ${keyspace}.t (k int PRIMARY KEY, v text)`)).error).toBeUndefined();
        expect((await cql.query(`INSERT INTO ${keyspace}.t (k, v) VALUES (1, 'system.local')`)).error).toBeUndefined();
        const prepared = await request(Opcode.PREPARE, encodePrepare({ query: `UPDATE ${keyspace}.t SET v = ? WHERE k = ?` }, 4));
        const statement = 'result' in prepared ? prepared.result : undefined;
        if (statement?.kind !== 'Prepared') throw new Error('PREPARE failed');
        const batch = await request(
          Opcode.BATCH,
          encodeBatch(
            {
              type: 0,
              consistency: Consistency.ONE,
              statements: [
                { kind: 'query', query: `DELETE FROM ${keyspace}.t WHERE k = 2`, values: [] },
                { kind: 'prepared', id: statement.id, values: [Buffer.from('system'), Buffer.from([0, 0, 0, 1])] },
              ],
            },
            4,
          ),
        );
        expect(batch.error).toBeUndefined();
        expect((await cql.query(`SELECT v, 10 % 4 FROM ${keyspace}.t WHERE k = 1`)).rows).toEqual([{ v: 'system', '10 % 4': 2 }]);
        // Statements over the 64 KiB the proxy classifies from: a long write mentioning system passes,
        // a long conditional write to system.local is refused (it is read whole).
        const long = 'system '.repeat(12_000);
        expect((await cql.query(`INSERT INTO ${keyspace}.t (k, v) VALUES (3, '${long}')`)).error).toBeUndefined();
        const refused = await cql.query(`UPDATE system.local SET rack = '${long}' WHERE key = 'local' IF host_id = ${NO_HOST}`);
        expect(leaks(refused, identity)).toEqual([]);
        expect(refused.error?.message).toMatch(/system\.local cannot be written through the proxy/);
      } finally {
        await cql.query(`DROP KEYSPACE IF EXISTS ${keyspace}`);
      }
    },
    TIMEOUT,
  );
});
