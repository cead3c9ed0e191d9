// A client's extra connection to another node, set up against the real cassandra-auth node: the
// client's STARTUP and PLAIN credentials are replayed (v4 with and without LZ4, v5 with segments,
// plain and LZ4), and the connection then serves requests as that user. Wrong credentials give no
// connection (the client's requests then stay on its first one).
import { afterAll, describe, expect, it } from '@jest/globals';
import { testServer } from '../../../../scripts/testenv/state.mjs';
import { Consistency } from '../../src/protocol/consistency.js';
import { Opcode } from '../../src/protocol/frame.js';
import { encodeAuthToken, encodeQuery, encodeStartup } from '../../src/protocol/requests.js';
import { BackendConnection } from '../../src/proxy/backend-connection.js';
import { ReplicaConnections } from '../../src/proxy/replica-connections.js';
import type { CassandraEntry } from './harness.js';

const backend = testServer<CassandraEntry>('cassandra-auth');
const TIMEOUT = 60_000;
const PASSWORD_AUTHENTICATOR = 'org.apache.cassandra.auth.PasswordAuthenticator';

(backend ? describe : describe.skip)('a replayed client handshake on a real authenticating node', () => {
  const [host, port] = (backend?.contactPoints[0] ?? '127.0.0.1:9042').split(':') as [string, string];
  const node = { host, port: Number(port) };
  const opened: ReplicaConnections[] = [];
  afterAll(() => opened.forEach((r) => r.close()));

  /** What a client connection records of its own handshake, then a connection to `node` for it. */
  const replayed = (version: number, compression: string | undefined, password: string) => {
    const replicas = new ReplicaConnections(version, {
      connect: (target, v, onClose) => BackendConnection.connect({ ...target, version: v, connectTimeout: 5000, onClose }),
      timeout: 10_000,
      retryAfter: 60_000,
    });
    opened.push(replicas);
    const options = new Map([['CQL_VERSION', '3.0.0']]);
    if (compression) options.set('COMPRESSION', compression);
    replicas.startupSent(encodeStartup({ options }), 0, compression === 'lz4');
    replicas.startupAnswered(Opcode.AUTHENTICATE, PASSWORD_AUTHENTICATOR);
    replicas.authResponseSent(encodeAuthToken({ token: Buffer.from(`\0${backend!.username}\0${password}`) }), 0);
    replicas.authAnswered(Opcode.AUTH_SUCCESS);
    return replicas.connection(node);
  };

  it.each([
    [4, undefined],
    [4, 'lz4'],
    [5, undefined],
    [5, 'lz4'],
  ])(
    'v%i, compression %s: authenticated as the client and serving requests',
    async (version, compression) => {
      const connection = await replayed(version, compression, backend!.password!);
      expect(connection).toBeDefined();
      const answer = await connection!.request(
        Opcode.QUERY,
        encodeQuery({ query: 'SELECT role FROM system_auth.roles LIMIT 1', parameters: { consistency: Consistency.ONE } }, version),
        { timeout: 10_000 },
      );
      expect(answer.opcode).toBe(Opcode.RESULT);
    },
    TIMEOUT,
  );

  it(
    'credentials the node refuses give no connection',
    async () => {
      expect(await replayed(4, undefined, 'not the password')).toBeUndefined();
    },
    TIMEOUT,
  );
});
