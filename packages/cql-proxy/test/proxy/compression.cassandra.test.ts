// Frame compression (v4): the client's compressed frames pass through to the real Cassandra,
// which must decompress them, and its compressed answers come back readable.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { testServer } from '../../../../scripts/testenv/state.mjs';
import { Consistency } from '../../src/protocol/consistency.js';
import { decodeError } from '../../src/protocol/error-message.js';
import { Opcode } from '../../src/protocol/frame.js';
import { encodeQuery, encodeStartup } from '../../src/protocol/requests.js';
import { decodeSupported } from '../../src/protocol/responses.js';
import { decodeResult } from '../../src/protocol/result.js';
import { RawClient } from './raw-client.js';
import { startProxy, type CassandraEntry, type RunningProxy } from './harness.js';

const backend = testServer<CassandraEntry>('cassandra');

(backend ? describe : describe.skip)('frame compression through the proxy', () => {
  let running: RunningProxy;
  beforeAll(async () => {
    running = await startProxy(backend!);
  }, 120_000);
  afterAll(async () => {
    await running?.stop();
  });

  it.each(['lz4', 'snappy'])('%s', async (name) => {
    const c = await RawClient.open(running.address);
    c.send(4, 0, Opcode.OPTIONS, Buffer.alloc(0));
    const supported = decodeSupported((await c.next(0))!.body).options;
    expect(supported.get('COMPRESSION')).toContain(name);
    c.send(
      4,
      1,
      Opcode.STARTUP,
      encodeStartup({
        options: new Map([
          ['CQL_VERSION', '3.0.0'],
          ['COMPRESSION', name],
        ]),
      }),
    );
    expect((await c.next(1))?.opcode).toBe(Opcode.READY);
    c.useCompression(name);
    // A long statement so the compressed body differs from the plain one.
    const query = `SELECT keyspace_name FROM system_schema.keyspaces WHERE keyspace_name IN (${Array.from({ length: 50 }, () => "'system'").join(',')})`;
    c.send(4, 2, Opcode.QUERY, encodeQuery({ query, parameters: { consistency: Consistency.ONE } }, 4));
    const reply = (await c.next(2))!;
    if (reply.opcode === Opcode.ERROR) throw new Error(decodeError(reply.body).message);
    const result = decodeResult(reply.body, 4);
    expect(result.kind).toBe('Rows');
    c.close();
  });
});
