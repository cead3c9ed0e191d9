// Smoke test for the real kube-apiserver from `npm run testenv -- up k8s`: the API groups the
// Kubernetes adapter relies on are served, and admin and service-account auth work.
import { describe, it, expect } from '@jest/globals';
import * as k8s from '@kubernetes/client-node';
import { testServer } from '../state.mjs';

interface K8sEntry {
  server: string;
  kubeconfig: string;
  caFile: string;
  adminToken: string;
  version: string;
}

const entry = testServer<K8sEntry>('k8s');
const describeK8s = entry ? describe : describe.skip;

const namespace = 'default';
const suffix = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 7)}`;

function kubeConfig(): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(entry!.kubeconfig);
  return kc;
}

describeK8s('k8s test server (smoke)', () => {
  it('reports the expected version', async () => {
    const info = await kubeConfig().makeApiClient(k8s.VersionApi).getCode();
    expect(info.gitVersion).toBe(entry!.version);
  });

  it('creates, reads back and deletes a coordination.k8s.io/v1 Lease', async () => {
    const api = kubeConfig().makeApiClient(k8s.CoordinationV1Api);
    const name = `smoke-lease-${suffix}`;
    // Lease times are MicroTime (6 fractional digits); a plain Date is sent with 3 and rejected
    // with 400, so client-node's V1MicroTime must be used.
    const acquired = new k8s.V1MicroTime(Math.floor(Date.now() / 1000) * 1000);
    await api.createNamespacedLease({
      namespace,
      body: {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name, labels: { 'app.kubernetes.io/part-of': 'muster-smoke' } },
        spec: {
          holderIdentity: 'smoke-holder',
          leaseDurationSeconds: 15,
          acquireTime: acquired,
          renewTime: acquired,
          leaseTransitions: 0,
        },
      },
    });
    try {
      const lease = await api.readNamespacedLease({ name, namespace });
      expect(lease.metadata?.name).toBe(name);
      expect(lease.metadata?.resourceVersion).toBeTruthy();
      expect(lease.spec?.holderIdentity).toBe('smoke-holder');
      expect(lease.spec?.leaseDurationSeconds).toBe(15);
      expect(new Date(lease.spec!.renewTime!).getTime()).toBe(acquired.getTime());
    } finally {
      await api.deleteNamespacedLease({ name, namespace });
    }
    await expect(api.readNamespacedLease({ name, namespace })).rejects.toMatchObject({ code: 404 });
  });

  it('creates, reads back and deletes a discovery.k8s.io/v1 EndpointSlice', async () => {
    const api = kubeConfig().makeApiClient(k8s.DiscoveryV1Api);
    const name = `smoke-slice-${suffix}`;
    await api.createNamespacedEndpointSlice({
      namespace,
      body: {
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: { name, labels: { 'kubernetes.io/service-name': 'muster-smoke' } },
        addressType: 'IPv4',
        endpoints: [{ addresses: ['10.1.2.3'], conditions: { ready: true } }],
        ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
      },
    });
    try {
      const slice = await api.readNamespacedEndpointSlice({ name, namespace });
      expect(slice.addressType).toBe('IPv4');
      expect(slice.endpoints[0]?.addresses).toEqual(['10.1.2.3']);
      expect(slice.endpoints[0]?.conditions?.ready).toBe(true);
      expect(slice.ports?.[0]?.port).toBe(8080);
      const listed = await api.listNamespacedEndpointSlice({
        namespace,
        labelSelector: 'kubernetes.io/service-name=muster-smoke',
      });
      expect(listed.items.map((s) => s.metadata?.name)).toContain(name);
    } finally {
      await api.deleteNamespacedEndpointSlice({ name, namespace });
    }
    await expect(api.readNamespacedEndpointSlice({ name, namespace })).rejects.toMatchObject({ code: 404 });
  });

  it('issues service-account tokens (TokenRequest) that RBAC then restricts', async () => {
    const core = kubeConfig().makeApiClient(k8s.CoreV1Api);
    const name = `smoke-sa-${suffix}`;
    await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name } } });
    try {
      const tr = await core.createNamespacedServiceAccountToken({
        name,
        namespace,
        body: { spec: { audiences: [], expirationSeconds: 600 } },
      });
      const token = tr.status?.token;
      expect(token).toBeTruthy();

      const kc = new k8s.KubeConfig();
      kc.loadFromOptions({
        clusters: [{ name: 'c', server: entry!.server, caFile: entry!.caFile }],
        users: [{ name: 'sa', token }],
        contexts: [{ name: 'ctx', cluster: 'c', user: 'sa', namespace }],
        currentContext: 'ctx',
      });
      const review = await kc.makeApiClient(k8s.AuthenticationV1Api).createSelfSubjectReview({ body: {} });
      expect(review.status?.userInfo?.username).toBe(`system:serviceaccount:${namespace}:${name}`);
      // No Role grants it anything yet.
      await expect(kc.makeApiClient(k8s.CoordinationV1Api).listNamespacedLease({ namespace })).rejects.toMatchObject({ code: 403 });
    } finally {
      await core.deleteNamespacedServiceAccount({ name, namespace });
    }
  });
});
