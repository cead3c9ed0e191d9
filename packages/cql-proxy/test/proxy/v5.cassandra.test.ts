// Protocol v5 end to end: segment framing (CRC24/CRC32), with and without LZ4 segments, both
// towards the client and towards the real Cassandra 5.0.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { testServer } from '../../../../scripts/testenv/state.mjs';
import { decodeCell } from '../../src/protocol/cells.js';
import { Consistency } from '../../src/protocol/consistency.js';
import { decodeError } from '../../src/protocol/error-message.js';
import { Opcode } from '../../src/protocol/frame.js';
import { encodeQuery, encodeStartup } from '../../src/protocol/requests.js';
import { decodeResult } from '../../src/protocol/result.js';
import { RawClient } from './raw-client.js';
import { startProxy, type CassandraEntry, type RunningProxy } from './harness.js';

const backend = testServer<CassandraEntry>('cassandra');

(backend ? describe : describe.skip)('protocol v5 through the proxy', () => {
  let running: RunningProxy;
  beforeAll(async () => {
    running = await startProxy(backend!);
  }, 120_000);
  afterAll(async () => {
    await running?.stop();
  });

  const rows = (frame: { opcode: number; body: Buffer } | undefined) => {
    if (!frame) throw new Error('connection closed');
    if (frame.opcode === Opcode.ERROR) throw new Error(decodeError(frame.body).message);
    const result = decodeResult(frame.body, 5);
    if (result.kind !== 'Rows') throw new Error(`expected rows, got ${result.kind}`);
    return result.rows.map((row) => row.map((cell, i) => decodeCell(result.metadata.columns![i]!.type, cell)));
  };

  it.each([
    ['uncompressed segments', undefined],
    ['lz4 segments', 'lz4'],
  ])('%s', async (_name, compression) => {
    const c = await RawClient.open(running.address);
    const options = new Map([['CQL_VERSION', '3.0.0']]);
    if (compression) options.set('COMPRESSION', compression);
    c.send(5, 1, Opcode.STARTUP, encodeStartup({ options }));
    expect((await c.next(1))?.opcode).toBe(Opcode.READY);
    c.useSegments(compression === 'lz4');
    // Answered by the proxy (system.local) and by Cassandra (a user table), both framed.
    c.send(
      5,
      2,
      Opcode.QUERY,
      encodeQuery({ query: 'SELECT release_version FROM system.local', parameters: { consistency: Consistency.ONE } }, 5),
    );
    expect(rows(await c.next(2))).toEqual([[backend!.version]]);
    const long = `SELECT keyspace_name FROM system_schema.keyspaces WHERE keyspace_name IN (${Array.from({ length: 40 }, () => "'system'").join(',')})`;
    c.send(5, 3, Opcode.QUERY, encodeQuery({ query: long, parameters: { consistency: Consistency.ONE } }, 5));
    expect(rows(await c.next(3))).toEqual([['system']]);
    c.close();
  });
});
