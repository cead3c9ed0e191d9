// A plain-http server behind an HTTP proxy: requests go to the proxy in absolute form with the
// proxy's credentials, and the server's name is resolved only there (no real apiserver needed).
import { afterAll, expect, test } from '@jest/globals';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeClient, leases } from '../src/client.js';
import { noHeaders } from '../src/credentials.js';

const servers: Server[] = [];
async function listen(server: Server): Promise<number> {
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as AddressInfo).port;
}
afterAll(async () => {
  for (const s of servers) s.closeAllConnections();
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
});

test('an http:// server through an http proxy: absolute-form requests carrying Proxy-Authorization', async () => {
  const apiPort = await listen(
    createServer((req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ metadata: { name: 'x', annotations: { path: req.url!, host: req.headers.host! } } }));
    }),
  );
  const proxied: { url: string; auth: string | undefined }[] = [];
  const proxyPort = await listen(
    createServer((req, res) => {
      proxied.push({ url: req.url!, auth: req.headers['proxy-authorization'] });
      const target = new URL(req.url!);
      const upstream = request(
        { hostname: '127.0.0.1', port: apiPort, path: `${target.pathname}${target.search}`, method: req.method, headers: req.headers },
        (answer) => {
          res.writeHead(answer.statusCode!, answer.headers);
          answer.pipe(res);
        },
      );
      req.pipe(upstream);
    }),
  );
  const client = new KubeClient({
    server: new URL('http://api.cluster.invalid:8001'),
    proxy: new URL(`http://ops:s3cret@127.0.0.1:${proxyPort}`),
    namespace: 'ns-1',
    source: 'test',
    credentials: noHeaders({ tls: {}, identity: 'tester' }),
  });
  const lease = await client.get(leases, 'x');
  client.close();
  expect(lease?.metadata?.annotations).toEqual({
    path: '/apis/coordination.k8s.io/v1/namespaces/ns-1/leases/x',
    host: 'api.cluster.invalid:8001',
  });
  expect(proxied).toEqual([
    {
      url: 'http://api.cluster.invalid:8001/apis/coordination.k8s.io/v1/namespaces/ns-1/leases/x',
      auth: `Basic ${Buffer.from('ops:s3cret').toString('base64')}`,
    },
  ]);
});
