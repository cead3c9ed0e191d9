// Stream ids a client reuses or picks out of range, through the proxy and straight to Cassandra 5.
// Cassandra does not check a request's stream id: requests sharing one in flight are each run and
// each answered under that id, in the order they finish, and a negative id (reserved for server
// events in v3+) is answered too. The proxy answers reused ids as Cassandra does, each with its own
// answer (it maps every request to a backend id of its own and relays under the client's), and
// refuses a negative id with PROTOCOL_ERROR, so an answer can never look like an event.
// Requests sent behind a STARTUP before its answer: Cassandra 5 drops them unanswered (v4 frames and
// v5 segments alike) and the connection goes on; the proxy answers plain frames sent there, and a
// v5 segment (which the client may only send after READY) is a framing error it answers and closes on
// rather than leave a request unanswered.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { testServer } from '../../../../scripts/testenv/state.mjs';
import { decodeCell } from '../../src/protocol/cells.js';
import { decodeError } from '../../src/protocol/error-message.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { encodeFrameHeader, Opcode, type Frame } from '../../src/protocol/frame.js';
import { encodeQuery, encodeStartup } from '../../src/protocol/requests.js';
import { encodeSegments } from '../../src/protocol/segment.js';
import { decodeResult } from '../../src/protocol/result.js';
import { startProxy, type CassandraEntry, type RunningProxy } from '../proxy/harness.js';
import { RawClient } from '../proxy/raw-client.js';

const backend = testServer<CassandraEntry>('cassandra');
const query = (text: string) => encodeQuery({ query: text, parameters: { consistency: 1 } }, 4);

/** Forwarded reads with different answers, an intercepted one, and a forwarded error. */
const REQUESTS = [
  ...['system', 'system_schema', 'system_auth', 'system_distributed', 'system_traces'].map(
    (ks) => `SELECT keyspace_name FROM system_schema.keyspaces WHERE keyspace_name = '${ks}'`,
  ),
  "SELECT key FROM system.local WHERE key = 'local'",
  'SELECT nothing FROM muster_no_such_keyspace.t',
];

/** What an answer says, to compare answers without their byte layout. */
function gist(frame: Frame | undefined): string {
  if (!frame) return 'no answer';
  if (frame.opcode === Opcode.ERROR) return `error 0x${decodeError(frame.body).code.toString(16)}`;
  const result = decodeResult(frame.body, 4);
  if (result.kind !== 'Rows') return result.kind;
  return result.rows.map((row) => String(decodeCell(result.metadata.columns![0]!.type, row[0] ?? null))).join(',');
}

/** Sends every request `times` times on stream 7 at once; the answers' gists, sorted. */
async function reuseOneStream(address: string, times: number): Promise<string[]> {
  const client = await RawClient.open(address);
  try {
    client.send(4, 0, Opcode.STARTUP, encodeStartup({ options: new Map([['CQL_VERSION', '3.0.0']]) }));
    expect((await client.next(0))?.opcode).toBe(Opcode.READY);
    for (let i = 0; i < times; i++) for (const text of REQUESTS) client.send(4, 7, Opcode.QUERY, query(text));
    const answers: string[] = [];
    for (let i = 0; i < times * REQUESTS.length; i++) answers.push(gist(await client.next(7)));
    // Nothing more comes: one answer per request.
    client.send(4, 8, Opcode.OPTIONS, Buffer.alloc(0));
    expect((await client.next())?.stream).toBe(8);
    return answers.sort();
  } finally {
    client.close();
  }
}

(backend ? describe : describe.skip)('stream ids reused or out of range', () => {
  let running: RunningProxy;
  beforeAll(async () => {
    running = await startProxy(backend!);
  }, 60_000);
  afterAll(() => running?.stop());

  it('requests sharing a stream id in flight are each answered with their own answer, as Cassandra answers them', async () => {
    const expected = REQUESTS.map((text) =>
      text.includes('system.local') ? 'local' : text.includes('muster_no_such') ? 'error 0x2200' : /'(\w+)'/.exec(text)![1]!,
    );
    const sorted = (times: number) =>
      Array.from({ length: times }, () => expected)
        .flat()
        .sort();
    expect(await reuseOneStream(backend!.contactPoints[0]!, 20)).toEqual(sorted(20));
    expect(await reuseOneStream(running.address, 20)).toEqual(sorted(20));
  }, 60_000);

  it('a negative stream id gets PROTOCOL_ERROR on that id, and the connection goes on (Cassandra answers the request)', async () => {
    const client = await RawClient.open(running.address);
    try {
      client.send(4, 0, Opcode.STARTUP, encodeStartup({ options: new Map([['CQL_VERSION', '3.0.0']]) }));
      expect((await client.next(0))?.opcode).toBe(Opcode.READY);
      client.send(4, -5, Opcode.QUERY, query(REQUESTS[5]!));
      const refused = await client.next(-5);
      expect(refused?.opcode).toBe(Opcode.ERROR);
      expect(decodeError(refused!.body).code).toBe(ErrorCode.PROTOCOL_ERROR);
      client.send(4, 9, Opcode.QUERY, query(REQUESTS[5]!));
      expect(gist(await client.next(9))).toBe('local');
    } finally {
      client.close();
    }
  });

  it('a v5 segment sent behind STARTUP: Cassandra drops it unanswered, the proxy answers PROTOCOL_ERROR and closes', async () => {
    const behindStartup = async (address: string) => {
      const client = await RawClient.open(address);
      const startup = encodeStartup({ options: new Map([['CQL_VERSION', '3.0.0']]) });
      const frame = (stream: number, opcode: number, body: Buffer) =>
        Buffer.concat([encodeFrameHeader({ version: 5, response: false, flags: 0, stream, opcode }, body.length), body]);
      client.socket.write(
        Buffer.concat([frame(0, Opcode.STARTUP, startup), ...encodeSegments([frame(1, Opcode.QUERY, query(REQUESTS[5]!))])]),
      );
      return { client, first: await client.next(undefined, 10_000) };
    };
    const direct = await behindStartup(backend!.contactPoints[0]!);
    try {
      expect(direct.first?.opcode).toBe(Opcode.READY);
      direct.client.useSegments(false);
      direct.client.send(5, 2, Opcode.OPTIONS, Buffer.alloc(0));
      expect((await direct.client.next())?.stream).toBe(2);
    } finally {
      direct.client.close();
    }
    const proxied = await behindStartup(running.address);
    try {
      expect(proxied.first?.opcode).toBe(Opcode.ERROR);
      expect(decodeError(proxied.first!.body).code).toBe(ErrorCode.PROTOCOL_ERROR);
      expect(await proxied.client.next(undefined, 10_000)).toBeUndefined();
    } finally {
      proxied.client.close();
    }
  });
});
