// The connection cases users meet, against the real kube-apiserver: a cluster behind an HTTP
// CONNECT proxy (proxy-url), a plain-http server (a kubectl-proxy-like forwarder that adds the
// credentials), and a token file rotated under running clients while the old token is revoked.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as k8s from '@kubernetes/client-node';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect as tcpConnect, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMuster, type Muster } from '@muster/core';
import { eventually } from '@muster/core/testing';
import { connect, leases } from '../src/client.js';
import { adminConfig, createNamespace, deleteNamespace, entry } from './k8s-testenv.js';

const describeK8s = entry ? describe : describe.skip;
const dir = mkdtempSync(join(tmpdir(), 'muster-k8s-connection-'));
let namespace = '';
const musters: Muster[] = [];
const servers: Server[] = [];
const sockets = new Set<Socket>();

async function listen(server: Server): Promise<number> {
  servers.push(server);
  server.on('connection', (s: Socket) => (sockets.add(s), s.on('close', () => sockets.delete(s))));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as AddressInfo).port;
}

function kubeconfigFile(name: string, cluster: Record<string, unknown>, user: Record<string, unknown>): string {
  const file = join(dir, name);
  writeFileSync(
    file,
    JSON.stringify({
      'current-context': 'x',
      clusters: [{ name: 'c', cluster }],
      users: [{ name: 'u', user }],
      contexts: [{ name: 'x', context: { cluster: 'c', user: 'u', namespace } }],
    }),
  );
  return file;
}

async function musterFor(kubeconfig: string): Promise<Muster> {
  const options = { kubeconfig, ttl: '3s' };
  const muster = await createMuster({ discovery: { adapter: 'kubernetes', options }, lock: { adapter: 'kubernetes', options } });
  musters.push(muster);
  return muster;
}

const caData = () => readFileSync(entry!.caFile).toString('base64');
const apiPort = () => Number(new URL(entry!.server).port);

/** What both routes must carry: a list, a watch that sees a change, and a lock taken, renewed and released. */
async function exercise(muster: Muster, service: string): Promise<void> {
  const api = adminConfig().makeApiClient(k8s.DiscoveryV1Api);
  const watch = muster.discovery.watch(service)[Symbol.asyncIterator]();
  expect((await watch.next()).value).toMatchObject({ type: 'snapshot', endpoints: [] });
  await api.createNamespacedEndpointSlice({
    namespace,
    body: {
      metadata: { name: `${service}-1`, labels: { 'kubernetes.io/service-name': service } },
      addressType: 'IPv4',
      endpoints: [{ addresses: ['10.7.0.1'], conditions: { ready: true }, targetRef: { kind: 'Pod', name: 'pod-1', namespace } }],
      ports: [{ name: 'cql', port: 9042 }],
    },
  });
  expect((await watch.next()).value).toMatchObject({ type: 'added', endpoint: { id: 'pod-1' } });
  await watch.return?.();
  expect((await muster.discovery.list(service)).map((e) => e.id)).toEqual(['pod-1']);
  const lease = await muster.lock.acquire(`${service}-lock`, { ttl: 3000 });
  await lease.renew();
  await lease.release();
}

describeK8s('connections to the real API server', () => {
  beforeAll(async () => {
    namespace = await createNamespace('muster-connection');
  });
  afterAll(async () => {
    await Promise.allSettled(musters.map((m) => m.close()));
    for (const s of sockets) s.destroy();
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
    if (namespace) await deleteNamespace(namespace);
  });

  test('proxy-url: every connection is an HTTP CONNECT tunnel through the proxy, which alone resolves the name', async () => {
    // The server's name resolves only at the proxy, as a corporate proxy resolves internal names.
    const tunnels: string[] = [];
    const proxy = createServer();
    proxy.on('connect', (req, client: Socket, head: Buffer) => {
      tunnels.push(req.url!);
      const [host, port] = req.url!.split(':');
      const upstream = tcpConnect(Number(port), host === 'kubernetes.default.svc' ? '127.0.0.1' : host!, () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        upstream.write(head);
        upstream.pipe(client).pipe(upstream);
      });
      sockets.add(upstream);
      upstream.on('error', () => client.destroy());
      client.on('error', () => upstream.destroy());
    });
    const proxyPort = await listen(proxy);
    const kubeconfig = kubeconfigFile(
      'proxied.json',
      {
        server: `https://kubernetes.default.svc:${apiPort()}`,
        'certificate-authority-data': caData(),
        'proxy-url': `http://127.0.0.1:${proxyPort}`,
      },
      { token: entry!.adminToken },
    );
    await exercise(await musterFor(kubeconfig), 'proxied');
    expect(tunnels.length).toBeGreaterThan(0);
    expect(new Set(tunnels)).toEqual(new Set([`kubernetes.default.svc:${apiPort()}`]));
  }, 30_000);

  test('an http:// server: a kubectl-proxy-like forwarder that adds the credentials', async () => {
    let forwarded = 0;
    const ca = readFileSync(entry!.caFile);
    const forwarder = createServer((req, res) => {
      forwarded++;
      const upstream = httpsRequest(
        {
          hostname: '127.0.0.1',
          port: apiPort(),
          path: req.url,
          method: req.method,
          ca,
          headers: { ...req.headers, host: `127.0.0.1:${apiPort()}`, authorization: `Bearer ${entry!.adminToken}` },
        },
        (answer) => {
          res.writeHead(answer.statusCode!, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on('error', () => res.destroy());
      req.pipe(upstream);
    });
    const port = await listen(forwarder);
    // No credentials in the kubeconfig: the forwarder holds them, as kubectl proxy does.
    await exercise(await musterFor(kubeconfigFile('plain-http.json', { server: `http://127.0.0.1:${port}` }, {})), 'plain-http');
    expect(forwarded).toBeGreaterThan(0);
  }, 30_000);

  test('a token file rotated to a new token while the old one is revoked: a held lock and further calls keep working', async () => {
    const admin = adminConfig();
    const core = admin.makeApiClient(k8s.CoreV1Api);
    const rbac = admin.makeApiClient(k8s.RbacAuthorizationV1Api);
    await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name: 'rotating' } } });
    await rbac.createNamespacedRoleBinding({
      namespace,
      body: {
        metadata: { name: 'rotating' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
        subjects: [{ kind: 'ServiceAccount', name: 'rotating', namespace }],
      },
    });
    // Each token is bound to a Secret: deleting the Secret revokes that token, as deleting a pod
    // revokes the tokens the kubelet projected into it.
    const boundToken = async (secret: string) => {
      const made = await core.createNamespacedSecret({ namespace, body: { metadata: { name: secret } } });
      const request = await core.createNamespacedServiceAccountToken({
        name: 'rotating',
        namespace,
        body: {
          spec: {
            audiences: [],
            expirationSeconds: 3600,
            boundObjectRef: { apiVersion: 'v1', kind: 'Secret', name: secret, uid: made.metadata!.uid! },
          },
        },
      });
      return request.status!.token;
    };
    const [first, second] = [await boundToken('token-1'), await boundToken('token-2')];
    const accepted = async (token: string) =>
      (await fetchStatus(`/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases`, token)) === 200;

    // Two clients read the file: a kubeconfig tokenFile user and the in-cluster service account.
    const tokenFile = join(dir, 'token');
    writeFileSync(tokenFile, first);
    const muster = await musterFor(
      kubeconfigFile('token-file.json', { server: entry!.server, 'certificate-authority-data': caData() }, { tokenFile }),
    );
    const serviceAccount = join(dir, 'serviceaccount');
    mkdirSync(serviceAccount);
    writeFileSync(join(serviceAccount, 'namespace'), namespace);
    writeFileSync(join(serviceAccount, 'ca.crt'), readFileSync(entry!.caFile));
    writeFileSync(join(serviceAccount, 'token'), first);
    const inCluster = await connect({
      baseDir: dir,
      inCluster: true,
      env: { KUBERNETES_SERVICE_HOST: '127.0.0.1', KUBERNETES_SERVICE_PORT: String(apiPort()) },
      serviceAccountDir: serviceAccount,
    });
    const lease = await muster.lock.acquire('rotated', { ttl: 3000 });
    expect(await inCluster.get(leases, 'rotated')).toMatchObject({ metadata: { name: 'rotated' } });

    writeFileSync(tokenFile, second);
    writeFileSync(join(serviceAccount, 'token'), second);
    await core.deleteNamespacedSecret({ name: 'token-1', namespace });
    // The API server caches token reviews for a few seconds: wait until it refuses the old token.
    await eventually('the old token refused', async () => ((await accepted(first)) ? undefined : true), 30_000, 250);
    expect(await accepted(second)).toBe(true);

    await lease.renew();
    expect(lease.onLost.aborted).toBe(false);
    expect(await muster.discovery.list('none')).toEqual([]);
    expect(await inCluster.get(leases, 'rotated')).toMatchObject({ metadata: { name: 'rotated' } });
    await lease.release();
    inCluster.close();
  }, 90_000);
});

/** The HTTP status of a GET as `token`, straight to the API server. */
function fetchStatus(path: string, token: string): Promise<number> {
  return new Promise((resolveStatus, reject) => {
    const req = httpsRequest(
      `${entry!.server}${path}`,
      { ca: readFileSync(entry!.caFile), headers: { Authorization: `Bearer ${token}` } },
      (res) => {
        res.resume();
        resolveStatus(res.statusCode!);
      },
    );
    req.on('error', reject);
    req.end();
  });
}
