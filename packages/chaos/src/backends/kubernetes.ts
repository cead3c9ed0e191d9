import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BackendError } from '@muster/core';
import { startPrivateServer, type PrivateServer } from './private-server.js';
import { networkedFaults, type BackendProfile } from './profile.js';

/** The fields of the testenv's `k8s` state entry this profile uses. */
export interface KubernetesServer {
  readonly server: string;
  readonly kubeconfig: string;
  readonly caFile: string;
  readonly adminToken: string;
  readonly namespace: string;
  /** The serving certificate and key (a proxy answers canned errors with them). */
  readonly certFile?: string;
  readonly keyFile?: string;
  readonly etcdPid?: number;
  readonly apiserverPid?: number;
}

export interface KubernetesProfileOptions {
  readonly runId: string;
  readonly ttl?: number;
  /** A running server (the shared testenv); without it a private one is started, and restarts become a fault. */
  readonly server?: KubernetesServer;
}

/** One call to the API server as its admin; resolves with the status when it is one of `ok`. */
function apiserver(server: KubernetesServer, method: string, path: string, ok: number[], body?: unknown): Promise<number> {
  const url = new URL(path, server.server);
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  const headers: Record<string, string> = { Authorization: `Bearer ${server.adminToken}` };
  if (payload) Object.assign(headers, { 'Content-Type': 'application/json', 'Content-Length': String(payload.length) });
  return new Promise((resolve, reject) => {
    const req = request(url, { method, ca: readFileSync(server.caFile), headers }, (res) => {
      res.resume();
      res.on('end', () =>
        ok.includes(res.statusCode ?? 0)
          ? resolve(res.statusCode!)
          : reject(new BackendError('kubernetes', `${method} ${url.pathname}: HTTP ${res.statusCode}`, { status: res.statusCode })),
      );
    });
    req.on('error', reject);
    req.end(payload);
  });
}

const leasesPath = (server: KubernetesServer) => `/apis/coordination.k8s.io/v1/namespaces/${server.namespace}/leases`;

async function deleteLease(server: KubernetesServer, name: string): Promise<void> {
  await apiserver(server, 'DELETE', `${leasesPath(server)}/${name}`, [200, 404]);
}

/**
 * The Lease deleted and created again at once by a holder that knows nothing of Muster (a client-go
 * elector with its own identity): no fencing-token annotation, leaseTransitions from 0, held for
 * `ttl` from now. Contenders must see a new holder, and the next Muster token must still be higher.
 */
async function recreateLeaseForeign(server: KubernetesServer, name: string, ttl: number): Promise<string> {
  await deleteLease(server, name);
  const now = new Date().toISOString().replace(/Z$/, '000Z');
  const spec = {
    holderIdentity: 'chaos-intruder',
    leaseDurationSeconds: Math.ceil(ttl / 1000),
    acquireTime: now,
    renewTime: now,
    leaseTransitions: 0,
  };
  const status = await apiserver(server, 'POST', leasesPath(server), [201, 409], {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name },
    spec,
  });
  return status === 201
    ? `deleted Lease '${name}' and created it again held by 'chaos-intruder' for ${spec.leaseDurationSeconds} s, without a fencing token`
    : `deleted Lease '${name}'; a contender created it again before the intruder could`;
}

/**
 * Contenders, and the observer, reach kube-apiserver through their own loopback proxy (a kubeconfig
 * per proxy points at it; TLS passes through, so the certificate is still verified).
 */
export async function kubernetesProfile(options: KubernetesProfileOptions): Promise<BackendProfile> {
  const ttl = options.ttl ?? 3000;
  const own: PrivateServer<KubernetesServer> | undefined = options.server ? undefined : await startPrivateServer<KubernetesServer>('k8s');
  let server = options.server ?? own!.entry;
  const upstream = new URL(server.server);
  const dir = mkdtempSync(join(tmpdir(), 'muster-chaos-kubeconfig-'));
  const kubeconfigVia = (port: number | undefined): string => {
    const file = join(dir, `kubeconfig-${port ?? 'direct'}`);
    const text = readFileSync(server.kubeconfig, 'utf8');
    writeFileSync(file, port === undefined ? text : text.replace(server.server, `https://127.0.0.1:${port}`), { mode: 0o600 });
    return file;
  };
  const config = (port: number | undefined) => {
    const opts = { kubeconfig: kubeconfigVia(port), namespace: server.namespace, heartbeatPrefix: `chaos-${options.runId}-` };
    return { lock: { adapter: 'kubernetes', options: opts }, heartbeat: { adapter: 'kubernetes', options: opts } };
  };
  const lockName = `chaos-${options.runId}`;
  return {
    name: 'kubernetes',
    inProcess: false,
    faults: networkedFaults(own !== undefined),
    ttl,
    // A killed holder's Lease runs out after its published duration (whole seconds), seen by a
    // follower that polls every retry period; twice the ttl plus two seconds covers both.
    livenessBound: 2 * ttl + 2000,
    heartbeatGrace: 2000,
    upstream: { host: upstream.hostname, port: Number(upstream.port) },
    ...(server.certFile && server.keyFile
      ? { upstreamTls: { cert: readFileSync(server.certFile), key: readFileSync(server.keyFile) } }
      : {}),
    contenderConfig: (_slot, port) => config(port),
    observerConfig: (port) => config(port),
    memberId: (slot) => `c${slot}`,
    group: `chaos-${options.runId}`,
    lockName,
    deleteLock: () => deleteLease(server, lockName),
    invalidateHolder: () => recreateLeaseForeign(server, lockName, ttl),
    ...(own
      ? {
          restart: async () => void (server = await own.restart()),
          serverProcesses: () => [
            ...(server.apiserverPid ? [{ name: 'kube-apiserver', pid: server.apiserverPid }] : []),
            ...(server.etcdPid ? [{ name: 'etcd', pid: server.etcdPid }] : []),
          ],
        }
      : {}),
    close: async () => {
      await deleteLease(server, lockName).catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
      await own?.close();
    },
  };
}
