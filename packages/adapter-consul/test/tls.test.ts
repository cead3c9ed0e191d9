// TLS to the agent: CA pinning and client certificates, against a loopback https server with
// certificates made by openssl for this test (no Consul needed). Skipped without openssl.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMuster } from '@muster/core';

let haveOpenssl = true;
try {
  execFileSync('openssl', ['version'], { stdio: 'ignore' });
} catch {
  haveOpenssl = false;
}

const dir = mkdtempSync(join(tmpdir(), 'muster-consul-tls-'));
const file = (name: string) => join(dir, name);
let server: Server;
let address = '';

function issue(name: string, cn: string, ext?: string): void {
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  execFileSync('openssl', ['req', ...ec, '-keyout', file(`${name}.key`), '-out', file(`${name}.csr`), '-subj', `/CN=${cn}`], {
    stdio: 'ignore',
  });
  const extArgs = ext ? (writeFileSync(file(`${name}.ext`), ext), ['-extfile', file(`${name}.ext`)]) : [];
  execFileSync(
    'openssl',
    [
      'x509',
      '-req',
      '-in',
      file(`${name}.csr`),
      '-CA',
      file('ca.pem'),
      '-CAkey',
      file('ca.key'),
      '-CAcreateserial',
      '-out',
      file(`${name}.pem`),
      '-days',
      '1',
      ...extArgs,
    ],
    { stdio: 'ignore' },
  );
}

(haveOpenssl ? describe : describe.skip)('TLS to the agent', () => {
  beforeAll(async () => {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        file('ca.key'),
        '-out',
        file('ca.pem'),
        '-days',
        '1',
        '-subj',
        '/CN=muster-test-ca',
      ],
      { stdio: 'ignore' },
    );
    issue('server', 'consul.test', 'subjectAltName=IP:127.0.0.1,DNS:consul.test');
    issue('client', 'muster-client');
    server = createServer(
      {
        key: readFileSync(file('server.key')),
        cert: readFileSync(file('server.pem')),
        ca: readFileSync(file('ca.pem')),
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
    const d = await discovery({ caFile: file('ca.pem'), certFile: file('client.pem'), keyFile: file('client.key') });
    expect(await d.list('svc')).toEqual([]);
    await d.close();
  });

  test('without the CA the error says to set tls.caFile', async () => {
    const d = await discovery({ certFile: file('client.pem'), keyFile: file('client.key') });
    await expect(d.list('svc')).rejects.toThrow(/TLS verification .* failed .* set tls.caFile/);
    await d.close();
  });

  test('without a client certificate the error says the agent wants one', async () => {
    const d = await discovery({ caFile: file('ca.pem') });
    await expect(d.list('svc')).rejects.toThrow(/refused the TLS handshake .* wants a client certificate .* tls.certFile/);
    await d.close();
  });

  test('a missing PEM file is named with its option path', async () => {
    await expect(discovery({ caFile: file('nope.pem') })).rejects.toThrow(/caFile.*nope\.pem/);
  });
});
