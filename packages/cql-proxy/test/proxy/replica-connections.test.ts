import { describe, expect, it } from '@jest/globals';
import { Opcode, type Frame } from '../../src/protocol/frame.js';
import { decodeQuery } from '../../src/protocol/requests.js';
import type { BackendConnection } from '../../src/proxy/backend-connection.js';
import { ReplicaConnections } from '../../src/proxy/replica-connections.js';

const PASSWORD = 'org.apache.cassandra.auth.PasswordAuthenticator';
const node = { host: '10.0.0.2', port: 9042 };

/** A backend connection that records what it is sent and answers from `answers` by opcode. */
function fakeNode(answers: Partial<Record<number, number>>) {
  const sent: { opcode: number; body: Buffer; flags: number }[] = [];
  let closed = false;
  const connection = {
    address: node,
    inFlight: 0,
    congested: false,
    get closed() {
      return closed;
    },
    close: () => {
      closed = true;
    },
    useSegments: () => undefined,
    request: (opcode: number, body: Buffer, options: { flags?: number } = {}) => {
      sent.push({ opcode, body, flags: options.flags ?? 0 });
      const answer = answers[opcode] ?? Opcode.ERROR;
      return Promise.resolve({ opcode: answer, body: Buffer.alloc(0) } as unknown as Frame);
    },
  } as unknown as BackendConnection;
  return { connection, sent, isClosed: () => closed };
}

const replicas = (connect: () => Promise<BackendConnection>) =>
  new ReplicaConnections(4, { connect: () => connect(), timeout: 1000, retryAfter: 60_000 });

describe('ReplicaConnections', () => {
  const startup = Buffer.from('startup message');
  const credentials = Buffer.from('\0alice\0secret');

  it('replays the STARTUP on a connection to another node when the backend needs no authentication', async () => {
    const backend = fakeNode({ [Opcode.STARTUP]: Opcode.READY });
    const r = replicas(() => Promise.resolve(backend.connection));
    r.startupSent(startup, 0, false);
    expect(r.usable).toBe(false);
    r.startupAnswered(Opcode.READY, undefined);
    expect(r.usable).toBe(true);
    const connection = await r.connection(node);
    expect(connection).toBe(backend.connection);
    expect(backend.sent.map((s) => [s.opcode, s.body.toString()])).toEqual([[Opcode.STARTUP, 'startup message']]);
    expect(r.connection(node)).toBe(backend.connection);
    expect(r.owns(backend.connection)).toBe(true);
  });

  it('replays a PasswordAuthenticator client credentials (one PLAIN round) as the client sent them', async () => {
    const backend = fakeNode({ [Opcode.STARTUP]: Opcode.AUTHENTICATE, [Opcode.AUTH_RESPONSE]: Opcode.AUTH_SUCCESS });
    const r = replicas(() => Promise.resolve(backend.connection));
    r.startupSent(startup, 0, false);
    r.startupAnswered(Opcode.AUTHENTICATE, PASSWORD);
    r.authResponseSent(credentials, 0x01);
    expect(r.usable).toBe(false);
    r.authAnswered(Opcode.AUTH_SUCCESS);
    expect(r.usable).toBe(true);
    expect(await r.connection(node)).toBe(backend.connection);
    expect(backend.sent.map((s) => [s.opcode, s.body.toString(), s.flags])).toEqual([
      [Opcode.STARTUP, 'startup message', 0],
      [Opcode.AUTH_RESPONSE, '\0alice\0secret', 0x01],
    ]);
    // The recorded credentials are wiped when the client leaves.
    r.close();
    expect(backend.sent[1]!.body.every((b) => b === 0)).toBe(true);
    expect(backend.isClosed()).toBe(true);
  });

  it.each([
    ['another authenticator', 'com.example.KerberosAuthenticator', [Opcode.AUTH_SUCCESS]],
    ['a challenge (more than one SASL round)', PASSWORD, [Opcode.AUTH_CHALLENGE, Opcode.AUTH_SUCCESS]],
  ])('keeps every request on the first connection after %s', (_what, authenticator, answers) => {
    const r = replicas(() => Promise.reject(new Error('must not connect')));
    r.startupSent(startup, 0, false);
    r.startupAnswered(Opcode.AUTHENTICATE, authenticator);
    for (const answer of answers) {
      r.authResponseSent(credentials, 0);
      r.authAnswered(answer);
    }
    expect(r.usable).toBe(false);
    expect(r.connection(node)).toBeUndefined();
  });

  it('does not try a node again soon after its connection could not be set up', async () => {
    let attempts = 0;
    const backend = fakeNode({ [Opcode.STARTUP]: Opcode.ERROR });
    const r = replicas(() => {
      attempts++;
      return Promise.resolve(backend.connection);
    });
    r.startupSent(startup, 0, false);
    r.startupAnswered(Opcode.READY, undefined);
    expect(await r.connection(node)).toBeUndefined();
    expect(backend.isClosed()).toBe(true);
    expect(r.connection(node)).toBeUndefined();
    expect(attempts).toBe(1);
  });

  it('sets the keyspace a statement was prepared in before preparing it again, once per keyspace', async () => {
    const backend = fakeNode({ [Opcode.STARTUP]: Opcode.READY, [Opcode.QUERY]: Opcode.RESULT });
    const r = replicas(() => Promise.resolve(backend.connection));
    r.startupSent(startup, 0, false);
    r.startupAnswered(Opcode.READY, undefined);
    const connection = (await r.connection(node))!;
    await r.useKeyspace(connection, 'Shop"s');
    await r.useKeyspace(connection, 'Shop"s');
    const uses = backend.sent.filter((s) => s.opcode === Opcode.QUERY).map((s) => decodeQuery(s.body, 4).query);
    expect(uses).toEqual(['USE "Shop""s"']);
  });
});
