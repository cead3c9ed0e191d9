// The testenv kube-apiserver for this package's *.k8s.test.ts files: its entry, an admin client
// (through @kubernetes/client-node, as an operator's tooling would be) and a fresh namespace.
import * as k8s from '@kubernetes/client-node';
import { testServer } from '../../../scripts/testenv/state.mjs';

export interface K8sEntry {
  server: string;
  kubeconfig: string;
  caFile: string;
  adminToken: string;
  etcdEndpoint: string;
  version: string;
}

export const entry = testServer<K8sEntry>('k8s');

export function adminConfig(): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(entry!.kubeconfig);
  return kc;
}

export const suffix = () => `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 7)}`;

/** Creates a namespace for one test file; returns its name. */
export async function createNamespace(prefix: string): Promise<string> {
  const name = `${prefix}-${suffix()}`;
  await adminConfig()
    .makeApiClient(k8s.CoreV1Api)
    .createNamespace({ body: { metadata: { name } } });
  return name;
}

export async function deleteNamespace(name: string): Promise<void> {
  // No controller-manager runs, so the namespace lingers as Terminating; its objects are ours to remove.
  const kc = adminConfig();
  const coordination = kc.makeApiClient(k8s.CoordinationV1Api);
  const discovery = kc.makeApiClient(k8s.DiscoveryV1Api);
  await coordination.deleteCollectionNamespacedLease({ namespace: name }).catch(() => undefined);
  await discovery.deleteCollectionNamespacedEndpointSlice({ namespace: name }).catch(() => undefined);
  await kc
    .makeApiClient(k8s.CoreV1Api)
    .deleteNamespace({ name })
    .catch(() => undefined);
}
