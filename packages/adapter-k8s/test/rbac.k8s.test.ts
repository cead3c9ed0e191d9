// deploy/kubernetes/rbac.yaml against the real API server: the adapter works as that service
// account with exactly those permissions, and fails with a message naming the verb, the resource
// and the Role when one verb is taken away.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as k8s from '@kubernetes/client-node';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { createMuster, type Muster } from '@muster/core';
import { eventually } from '@muster/core/testing';
import { adminConfig, createNamespace, deleteNamespace, entry } from './k8s-testenv.js';

const describeK8s = entry ? describe : describe.skip;
const rbacFile = join(dirname(fileURLToPath(import.meta.url)), '../../../deploy/kubernetes/rbac.yaml');
let namespace = '';
let kubeconfig = '';
const musters: Muster[] = [];

async function asServiceAccount(): Promise<Muster> {
  const options = { kubeconfig, ttl: '2s' };
  const muster = await createMuster({
    discovery: { adapter: 'kubernetes', options },
    lock: { adapter: 'kubernetes', options },
    heartbeat: { adapter: 'kubernetes', options },
  });
  musters.push(muster);
  return muster;
}

describeK8s('deploy/kubernetes/rbac.yaml', () => {
  beforeAll(async () => {
    namespace = await createNamespace('muster-rbac');
    const kc = adminConfig();
    const objects = k8s.KubernetesObjectApi.makeApiClient(kc);
    const text = readFileSync(rbacFile, 'utf8').replaceAll('namespace: muster', `namespace: ${namespace}`);
    for (const doc of parseAllDocuments(text)) await objects.create(doc.toJS() as k8s.KubernetesObject);
    const tr = await kc.makeApiClient(k8s.CoreV1Api).createNamespacedServiceAccountToken({
      name: 'muster',
      namespace,
      body: { spec: { audiences: [], expirationSeconds: 3600 } },
    });
    const dir = mkdtempSync(join(tmpdir(), 'muster-rbac-'));
    kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(
      kubeconfig,
      `apiVersion: v1
kind: Config
current-context: sa
clusters: [{ name: testenv, cluster: { server: "${entry!.server}", certificate-authority-data: ${readFileSync(entry!.caFile).toString('base64')} } }]
users: [{ name: muster, user: { token: "${tr.status!.token}" } }]
contexts: [{ name: sa, context: { cluster: testenv, user: muster, namespace: ${namespace} } }]
`,
    );
    await kc.makeApiClient(k8s.DiscoveryV1Api).createNamespacedEndpointSlice({
      namespace,
      body: {
        metadata: { name: 'rbac-svc-1', labels: { 'kubernetes.io/service-name': 'rbac-svc' } },
        addressType: 'IPv4',
        endpoints: [{ addresses: ['10.9.0.1'], conditions: { ready: true }, targetRef: { kind: 'Pod', name: 'rbac-pod-1', namespace } }],
        ports: [{ name: 'cql', port: 9042 }],
      },
    });
  });
  afterAll(async () => {
    await Promise.allSettled(musters.map((m) => m.close()));
    if (namespace) await deleteNamespace(namespace);
  });

  test('the adapter works as the service account with exactly these permissions', async () => {
    const muster = await asServiceAccount();
    expect((await muster.discovery.list('rbac-svc')).map((e) => e.id)).toEqual(['rbac-pod-1']);
    const watch = muster.discovery.watch('rbac-svc')[Symbol.asyncIterator]();
    expect((await watch.next()).value).toMatchObject({ type: 'snapshot' });
    await watch.return?.();

    const lease = await muster.lock.acquire('rbac-lock', { ttl: 2000 });
    await lease.renew();
    await lease.release();
    const again = await muster.lock.acquire('rbac-lock', { ttl: 2000 });
    expect(again.token).toBeGreaterThan(lease.token);
    await again.release();

    await muster.heartbeat.beat('rbac-member', { load: 1 }, { group: 'rbac' });
    expect((await muster.heartbeat.list('rbac')).map((m) => m.memberId)).toEqual(['rbac-member']);
    const hbWatch = muster.heartbeat.watch('rbac')[Symbol.asyncIterator]();
    expect((await hbWatch.next()).value).toMatchObject({ type: 'snapshot' });
    await hbWatch.return?.();
    await muster.heartbeat.remove('rbac-member');
    await muster.close();
  }, 60_000);

  test('without update on leases, acquiring fails with a message naming the verb, the resource and the Role', async () => {
    const rbac = adminConfig().makeApiClient(k8s.RbacAuthorizationV1Api);
    const role = await rbac.readNamespacedRole({ name: 'muster', namespace });
    role.rules = role.rules!.map((r) => (r.resources?.includes('leases') ? { ...r, verbs: r.verbs.filter((v) => v !== 'update') } : r));
    await rbac.replaceNamespacedRole({ name: 'muster', namespace, body: role });

    const muster = await asServiceAccount();
    // RBAC changes reach the authorizer's cache within a moment.
    const error = await eventually(
      'update on leases to be refused',
      async () => {
        try {
          const lease = await muster.lock.acquire('rbac-lock', { ttl: 2000, wait: 5000 });
          await lease.release().catch(() => undefined);
          return undefined;
        } catch (e) {
          return (e as { status?: number }).status === 403 ? (e as Error) : undefined;
        }
      },
      15_000,
      250,
    );
    expect(error.message).toMatch(/update leases\.coordination\.k8s\.io 'rbac-lock' in namespace 'muster-rbac-[^']+': forbidden by RBAC/);
    expect(error.message).toContain('deploy/kubernetes/rbac.yaml');
    expect((error as { code?: string }).code).toBe('MUSTER_BACKEND');

    // And without list on endpointslices, list() says so.
    const current = await rbac.readNamespacedRole({ name: 'muster', namespace });
    current.rules = current.rules!.map((r) => (r.resources?.includes('endpointslices') ? { ...r, verbs: ['get', 'watch'] } : r));
    await rbac.replaceNamespacedRole({ name: 'muster', namespace, body: current });
    const listError = await eventually(
      'list on endpointslices to be refused',
      async () =>
        muster.discovery.list('rbac-svc').then(
          () => undefined,
          (e: Error) => ((e as { status?: number }).status === 403 ? e : undefined),
        ),
      15_000,
      250,
    );
    expect(listError.message).toMatch(/list endpointslices\.discovery\.k8s\.io in namespace '[^']+': forbidden by RBAC/);
    // The watch stream of a refused service fails with the same clear error instead of waiting.
    const watch = muster.discovery.watch('rbac-svc')[Symbol.asyncIterator]();
    await expect(watch.next()).rejects.toMatchObject({ status: 403 });
  }, 60_000);
});
