// TLS to the agent: CA pinning and client certificates, against a loopback https server with
// certificates made by the testenv's openssl helper (no Consul needed). Skipped without openssl.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMuster } from '@muster/core';
import { makeClientCertificate, makeServerCertificate } from '../../../scripts/testenv/certificates.mjs';
import { testTool } from '../../../scripts/testenv/optional-tools.mjs';

const haveOpenssl = testTool('openssl');

const dir = mkdtempSync(join(tmpdir(), 'muster-consul-tls-'));
const file = (name: string) => join(dir, name);
let server: Server;
let address = '';

(haveOpenssl ? describe : describe.skip)('TLS to the agent', () => {
  beforeAll(async () => {
    await makeServerCertificate(dir, { cn: 'consul.test', sans: ['IP:127.0.0.1', 'DNS:consul.test'] });
    await makeClientCertificate(dir, { cn: 'muster-client' });
    server = createServer(
      {
        key: readFileSync(file('server.key')),
        cert: readFileSync(file('server.crt')),
        ca: readFileSync(file('ca.crt')),
        requestCert: true,
        rejectUnauthorized: true,
      },
      (_req, res) => res.writeHead(200, { 'X-Consul-Index': '3' }).end('[]'),
    );
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    address = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  const discovery = async (tls: Record<string, string>) =>
    (await createMuster({ discovery: { adapter: 'consul', options: { address, tls } } }, { cwd: dir })).discovery;

  test('with the CA and a client certificate the call goes through', async () => {
    const d = await discovery({ caFile: file('ca.crt'), certFile: file('client.crt'), keyFile: file('client.key') });
    expect(await d.list('svc')).toEqual([]);
    await d.close();
  });

  test('without the CA the error says to set tls.caFile', async () => {
    const d = await discovery({ certFile: file('client.crt'), keyFile: file('client.key') });
    await expect(d.list('svc')).rejects.toThrow(/TLS verification .* failed .* set tls.caFile/);
    await d.close();
  });

  test('without a client certificate the error says the agent wants one', async () => {
    const d = await discovery({ caFile: file('ca.crt') });
    await expect(d.list('svc')).rejects.toThrow(/refused the TLS handshake .* wants a client certificate .* tls.certFile/);
    await d.close();
  });

  test('a missing PEM file is named with its option path', async () => {
    await expect(discovery({ caFile: file('nope.pem') })).rejects.toThrow(/caFile.*nope\.pem/);
  });
});
