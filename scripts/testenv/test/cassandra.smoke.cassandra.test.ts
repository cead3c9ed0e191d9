// Smoke test for the real Cassandra nodes from `npm run testenv -- up cassandra cassandra-auth`:
// a CQL session reports a 5.0.x release and can write and read a row; with PasswordAuthenticator
// a wrong password is refused with an authentication error and the right one logs in.
import { describe, it, expect } from '@jest/globals';
import { Client, auth, errors } from 'cassandra-driver';
import { testServer } from '../state.mjs';

// Schema changes and first connections are slow on a busy 2-core machine; jest's default is 5 s.
const SCHEMA_TIMEOUT_MS = 120_000;

interface CassandraEntry {
  contactPoints: string[];
  localDataCenter: string;
  version: string;
  username?: string;
  password?: string;
}

function client(entry: CassandraEntry, credentials?: { username: string; password: string }): Client {
  return new Client({
    contactPoints: entry.contactPoints,
    localDataCenter: entry.localDataCenter,
    ...(credentials ? { authProvider: new auth.PlainTextAuthProvider(credentials.username, credentials.password) } : {}),
  });
}

async function releaseVersion(c: Client): Promise<string> {
  const row = (await c.execute('SELECT release_version FROM system.local')).first();
  return String(row.get('release_version'));
}

const plain = testServer<CassandraEntry>('cassandra');
(plain ? describe : describe.skip)('cassandra (one node)', () => {
  const entry = plain as CassandraEntry;

  it(
    'reports a 5.0.x release over CQL',
    async () => {
      const c = client(entry);
      try {
        await c.connect();
        const version = await releaseVersion(c);
        expect(version).toMatch(/^5\.0\.\d+$/);
        expect(version).toBe(entry.version);
      } finally {
        await c.shutdown();
      }
    },
    SCHEMA_TIMEOUT_MS,
  );

  it(
    'writes and reads back a row',
    async () => {
      const c = client(entry);
      const ks = `smoke_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 7)}`;
      try {
        await c.connect();
        await c.execute(`CREATE KEYSPACE ${ks} WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`);
        await c.execute(`CREATE TABLE ${ks}.kv (k text PRIMARY KEY, v int)`);
        await c.execute(`INSERT INTO ${ks}.kv (k, v) VALUES (?, ?)`, ['answer', 42], { prepare: true });
        const row = (await c.execute(`SELECT v FROM ${ks}.kv WHERE k = ?`, ['answer'], { prepare: true })).first();
        expect(row.get('v')).toBe(42);
      } finally {
        await c.execute(`DROP KEYSPACE IF EXISTS ${ks}`).catch(() => undefined);
        await c.shutdown();
      }
    },
    SCHEMA_TIMEOUT_MS,
  );
});

const secured = testServer<CassandraEntry>('cassandra-auth');
(secured ? describe : describe.skip)('cassandra-auth (PasswordAuthenticator)', () => {
  const entry = secured as CassandraEntry;

  it(
    'rejects a wrong password with an authentication error',
    async () => {
      const c = client(entry, { username: entry.username as string, password: `${entry.password}-wrong` });
      try {
        const failure = await c.connect().then(
          () => undefined,
          (err: unknown) => err,
        );
        expect(failure).toBeInstanceOf(errors.NoHostAvailableError);
        const inner = Object.values((failure as errors.NoHostAvailableError).innerErrors as Record<string, unknown>);
        expect(inner.length).toBeGreaterThan(0);
        for (const e of inner) {
          expect(e).toBeInstanceOf(errors.AuthenticationError);
          expect(String((e as Error).message)).toMatch(/and\/or password are incorrect/i);
        }
      } finally {
        await c.shutdown();
      }
    },
    SCHEMA_TIMEOUT_MS,
  );

  it(
    'accepts the right password',
    async () => {
      expect(entry.username).toBeTruthy();
      const c = client(entry, { username: entry.username as string, password: entry.password as string });
      try {
        await c.connect();
        expect(await releaseVersion(c)).toMatch(/^5\.0\.\d+$/);
        const me = (await c.execute('LIST ROLES OF ' + entry.username)).rows.map((r) => String(r.get('role')));
        expect(me).toContain(entry.username);
      } finally {
        await c.shutdown();
      }
    },
    SCHEMA_TIMEOUT_MS,
  );
});
