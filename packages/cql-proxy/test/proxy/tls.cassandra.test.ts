// TLS towards clients: cassandra-driver connects with the proxy's CA and verifies its name; a plain
// client is not served on the TLS port.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import cassandra from 'cassandra-driver';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeServerCertificate } from '../../../../scripts/testenv/certificates.mjs';
import { testServer } from '../../../../scripts/testenv/state.mjs';
import { Opcode } from '../../src/protocol/frame.js';
import { RawClient } from './raw-client.js';
import { startProxy, type CassandraEntry, type RunningProxy } from './harness.js';

const backend = testServer<CassandraEntry>('cassandra');

(backend ? describe : describe.skip)('TLS towards clients', () => {
  let running: RunningProxy;
  let files: { ca: string; cert: string; key: string };
  beforeAll(async () => {
    const made = await makeServerCertificate(mkdtempSync(join(tmpdir(), 'muster-tls-')), { cn: '127.0.0.1', sans: ['IP:127.0.0.1'] });
    files = { ca: made.caFile, cert: made.certFile, key: made.keyFile };
    running = await startProxy(backend!, { proxy: { tls: { certFile: files.cert, keyFile: files.key } } });
  }, 120_000);
  afterAll(async () => {
    await running?.stop();
  });

  it('cassandra-driver connects over TLS, verifying the certificate against the CA', async () => {
    const client = new cassandra.Client({
      contactPoints: [running.address],
      localDataCenter: backend!.localDataCenter,
      sslOptions: { ca: [readFileSync(files.ca)], rejectUnauthorized: true },
    });
    try {
      await client.connect();
      expect((await client.execute('SELECT release_version FROM system.local')).first().get('release_version')).toBe(backend!.version);
    } finally {
      await client.shutdown();
    }
  }, 60_000);

  it('a client that does not trust the certificate is refused at the handshake', async () => {
    const client = new cassandra.Client({
      contactPoints: [running.address],
      localDataCenter: backend!.localDataCenter,
      sslOptions: { rejectUnauthorized: true },
    });
    await expect(client.connect()).rejects.toThrow(/self.signed|unable to (get|verify)|certificate/i);
    await client.shutdown();
  }, 60_000);

  it('a plain-text client gets no CQL answer on the TLS port, and its connection is closed', async () => {
    const c = await RawClient.open(running.address);
    c.send(4, 1, Opcode.OPTIONS, Buffer.alloc(0));
    // undefined means the socket closed with no CQL frame; a frame, or a socket left open (next() times
    // out and throws), fails the test.
    expect(await c.next(1, 15_000)).toBeUndefined();
    expect(c.closed).toBe(true);
    c.close();
  }, 30_000);
});
