// Issue 12, 2: before AUTH_SUCCESS a client reads nothing through the proxy (no system.local, no
// peers, no REGISTER, nothing forwarded) and is answered exactly as the real Cassandra answers it.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { testServer } from '../../../../scripts/testenv/state.mjs';
import { Consistency } from '../../src/protocol/consistency.js';
import { decodeError } from '../../src/protocol/error-message.js';
import { Opcode } from '../../src/protocol/frame.js';
import { encodeAuthToken, encodePrepare, encodeQuery, encodeRegister, encodeStartup } from '../../src/protocol/requests.js';
import { startProxy, type CassandraEntry, type RunningProxy } from './harness.js';
import { RawClient } from './raw-client.js';

const backend = testServer<CassandraEntry>('cassandra-auth');
const TIMEOUT = 120_000;

const startup = encodeStartup({ options: new Map([['CQL_VERSION', '3.0.0']]) });
const requests: [string, number, Buffer][] = [
  [
    'QUERY system.local',
    Opcode.QUERY,
    encodeQuery({ query: 'SELECT * FROM system.local', parameters: { consistency: Consistency.ONE } }, 4),
  ],
  [
    'QUERY system.peers',
    Opcode.QUERY,
    encodeQuery({ query: 'SELECT * FROM system.peers', parameters: { consistency: Consistency.ONE } }, 4),
  ],
  [
    'QUERY a user table',
    Opcode.QUERY,
    encodeQuery({ query: 'SELECT * FROM system_auth.roles', parameters: { consistency: Consistency.ONE } }, 4),
  ],
  ['PREPARE system.peers_v2', Opcode.PREPARE, encodePrepare({ query: 'SELECT * FROM system.peers_v2' }, 4)],
  ['REGISTER', Opcode.REGISTER, encodeRegister({ eventTypes: ['TOPOLOGY_CHANGE', 'STATUS_CHANGE', 'SCHEMA_CHANGE'] })],
  ['a second STARTUP', Opcode.STARTUP, startup],
];

/** What `address` answers to each request sent after STARTUP was answered AUTHENTICATE. */
async function answersBeforeAuth(address: string): Promise<Record<string, { opcode: number; code?: number; message?: string }>> {
  const client = await RawClient.open(address);
  try {
    client.send(4, 1, Opcode.STARTUP, startup);
    expect((await client.next(1))?.opcode).toBe(Opcode.AUTHENTICATE);
    const out: Record<string, { opcode: number; code?: number; message?: string }> = {};
    let stream = 10;
    for (const [what, opcode, body] of requests) {
      client.send(4, ++stream, opcode, body);
      const frame = await client.next(stream);
      if (!frame) throw new Error(`${address} closed the connection after ${what}`);
      out[what] = frame.opcode === Opcode.ERROR ? { opcode: frame.opcode, ...decodeError(frame.body) } : { opcode: frame.opcode };
    }
    // The connection is still usable: the right credentials log in after all of that.
    const token = Buffer.from(`\0${backend!.username}\0${backend!.password}`);
    client.send(4, 99, Opcode.AUTH_RESPONSE, encodeAuthToken({ token }));
    expect((await client.next(99))?.opcode).toBe(Opcode.AUTH_SUCCESS);
    return out;
  } finally {
    client.close();
  }
}

(backend ? describe : describe.skip)('before AUTH_SUCCESS (cassandra-auth)', () => {
  let running: RunningProxy;
  beforeAll(async () => {
    running = await startProxy(backend!);
  }, TIMEOUT);
  afterAll(async () => {
    await running?.stop();
  });

  it(
    'the proxy refuses every request but AUTH_RESPONSE with the code and message the real server uses',
    async () => {
      const real = await answersBeforeAuth(backend!.contactPoints[0]!);
      const proxied = await answersBeforeAuth(running.address);
      expect(real['QUERY system.local']).toEqual({
        opcode: Opcode.ERROR,
        code: 0x000a,
        message: 'Unexpected message QUERY, expecting SASL_RESPONSE',
      });
      expect(proxied).toEqual(real);
    },
    TIMEOUT,
  );

  it(
    'nothing of the virtual cluster is sent before AUTH_SUCCESS: no rows, no events',
    async () => {
      const client = await RawClient.open(running.address);
      try {
        client.send(4, 1, Opcode.STARTUP, startup);
        await client.next(1);
        client.send(4, 2, Opcode.REGISTER, encodeRegister({ eventTypes: ['TOPOLOGY_CHANGE', 'STATUS_CHANGE'] }));
        expect((await client.next(2))?.opcode).toBe(Opcode.ERROR);
        client.send(4, 3, Opcode.OPTIONS, Buffer.alloc(0));
        expect((await client.next(3))?.opcode).toBe(Opcode.SUPPORTED);
        // Anything else that arrived (an EVENT on stream -1) would be a leak.
        await expect(client.next(-1, 500)).rejects.toThrow(/no frame/);
      } finally {
        client.close();
      }
    },
    TIMEOUT,
  );
});
