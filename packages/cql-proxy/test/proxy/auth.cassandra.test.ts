// SASL passes through: the backend (PasswordAuthenticator) decides for each client connection.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import cassandra from 'cassandra-driver';
import { testServer } from '../../../../scripts/testenv/state.mjs';
import { startProxy, type CassandraEntry, type RunningProxy } from './harness.js';

const backend = testServer<CassandraEntry>('cassandra-auth');
const TIMEOUT = 120_000;

(backend ? describe : describe.skip)('auth pass-through (PasswordAuthenticator)', () => {
  let running: RunningProxy;
  beforeAll(async () => {
    running = await startProxy(backend!);
  }, TIMEOUT);
  afterAll(async () => {
    await running?.stop();
  });

  const client = (username: string, password: string) =>
    new cassandra.Client({
      contactPoints: [running.address],
      localDataCenter: backend!.localDataCenter,
      authProvider: new cassandra.auth.PlainTextAuthProvider(username, password),
    });

  it(
    'the right credentials log in',
    async () => {
      const c = client(backend!.username!, backend!.password!);
      try {
        await c.connect();
        expect((await c.execute('SELECT release_version FROM system.local')).first().get('release_version')).toBe(backend!.version);
      } finally {
        await c.shutdown();
      }
    },
    TIMEOUT,
  );

  it(
    'a wrong password is refused by the backend, through the proxy',
    async () => {
      const c = client(backend!.username!, 'wrong-password');
      const error = await c.connect().catch((e: unknown) => e);
      await c.shutdown();
      const inner = Object.values((error as { innerErrors?: Record<string, unknown> }).innerErrors ?? {})[0];
      expect(inner).toBeInstanceOf(cassandra.errors.AuthenticationError);
      expect(String((inner as Error).message)).toMatch(/Provided username .* and\/or password are incorrect/);
    },
    TIMEOUT,
  );
});
