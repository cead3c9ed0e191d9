// TLS towards the backend: the testenv's cassandra-auth node takes TLS (optionally) on its native
// port with a certificate for 127.0.0.1 and localhost from its own CA. The proxy verifies the chain
// and the name; Cassandra's own system_views.clients shows the connections are encrypted.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import cassandra from 'cassandra-driver';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeServerCertificate } from '../../../../scripts/testenv/certificates.mjs';
import { testServer } from '../../../../scripts/testenv/state.mjs';
import { CONTROL_DRIVER_NAME } from '../../src/proxy/backend-cluster.js';
import { startProxy, type CassandraEntry, type RunningProxy } from './harness.js';

const backend = testServer<CassandraEntry & { tls?: { caFile: string } }>('cassandra-auth');
const TIMEOUT = 120_000;

(backend ? describe : describe.skip)('TLS towards the backend (cassandra-auth, client encryption optional)', () => {
  const credentials = () => ({ username: backend!.username!, password: backend!.password! });
  const proxyWith = (tls: Record<string, unknown>) =>
    startProxy(backend!, { proxy: { backend: { contactPoints: backend!.contactPoints, ...credentials(), tls } } });
  /** A CA that signed nothing the node has. */
  const strangerCa = async () =>
    (await makeServerCertificate(mkdtempSync(join(tmpdir(), 'muster-backend-tls-')), { cn: 'stranger', sans: ['DNS:stranger'] })).caFile;

  let running: RunningProxy;
  beforeAll(async () => {
    expect(backend!.tls?.caFile).toBeDefined();
    running = await proxyWith({ caFile: backend!.tls!.caFile });
  }, TIMEOUT);
  afterAll(async () => {
    await running?.stop();
  });

  it(
    "a driver's requests and the control connection travel over TLS verified against the node's CA",
    async () => {
      const application = `backend-tls-${Date.now()}`;
      const client = new cassandra.Client({
        contactPoints: [running.address],
        localDataCenter: backend!.localDataCenter,
        applicationName: application,
        authProvider: new cassandra.auth.PlainTextAuthProvider(credentials().username, credentials().password),
      });
      // system_views.clients is the node's view (the proxy refuses it to its own clients): asked of the node itself.
      const node = new cassandra.Client({
        contactPoints: backend!.contactPoints,
        localDataCenter: backend!.localDataCenter,
        authProvider: new cassandra.auth.PlainTextAuthProvider(credentials().username, credentials().password),
      });
      try {
        await client.connect();
        const rows = (await node.execute('SELECT client_options, driver_name, ssl_enabled, ssl_protocol FROM system_views.clients')).rows;
        const mine = rows.filter((r) => (r.get('client_options') as Record<string, string> | null)?.APPLICATION_NAME === application);
        expect(mine.length).toBeGreaterThanOrEqual(1);
        for (const row of mine) {
          expect(row.get('ssl_enabled')).toBe(true);
          expect(row.get('ssl_protocol')).toMatch(/^TLSv1\.[23]$/);
        }
        // Plain control connections of other tests may be open too; ours is encrypted, so one at least is.
        const control = rows.filter((r) => r.get('driver_name') === CONTROL_DRIVER_NAME);
        expect(control.some((r) => r.get('ssl_enabled') === true)).toBe(true);
      } finally {
        await client.shutdown();
        await node.shutdown();
      }
    },
    TIMEOUT,
  );

  it(
    'a node whose certificate the CA did not sign is refused at the handshake',
    async () => {
      const error = await proxyWith({ caFile: await strangerCa() }).then(
        async (p) => {
          await p.stop();
          return undefined;
        },
        (e: unknown) => e as Error,
      );
      expect(error?.message).toMatch(/control connection[\s\S]*cannot connect to Cassandra at 127\.0\.0\.1:\d+: .*certificate/);
    },
    TIMEOUT,
  );

  it(
    'the name is verified: a wrong serverName is refused, one on the certificate accepted, and verifyHostname: false skips it',
    async () => {
      const wrong = await proxyWith({ caFile: backend!.tls!.caFile, serverName: 'cassandra.example.com' }).then(
        async (p) => {
          await p.stop();
          return undefined;
        },
        (e: unknown) => e as Error,
      );
      expect(wrong?.message).toMatch(/Hostname\/IP does not match certificate's altnames: Host: cassandra\.example\.com/);
      for (const tls of [
        { caFile: backend!.tls!.caFile, serverName: 'localhost' },
        { caFile: backend!.tls!.caFile, serverName: 'cassandra.example.com', verifyHostname: false },
      ]) {
        const p = await proxyWith(tls);
        await p.stop();
      }
    },
    TIMEOUT,
  );
});
