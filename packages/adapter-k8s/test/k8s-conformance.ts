// The core conformance suites (lock, heartbeat, discovery) against the testenv kube-apiserver,
// for one way of connecting: the test files differ only in the connection options they pass.
import { afterAll, beforeAll, describe, test } from '@jest/globals';
import * as k8s from '@kubernetes/client-node';
import { createMuster, type Muster } from '@muster/core';
import { discoveryConformance, heartbeatConformance, lockConformance, type DiscoveryControl } from '@muster/core/testing';
import { proxyFaults, proxyHang } from '../../../scripts/testenv/proxy-faults.mjs';
import { startTcpProxy, type TcpProxy } from '../../../scripts/testenv/tcp-proxy.mjs';
import { adminConfig, createNamespace, deleteNamespace, entry } from './k8s-testenv.js';

/**
 * `proxied`, when given, connects through another server address: the clients under test then reach
 * the apiserver through a loopback TCP proxy, so the suites can cut them off (outage), break every
 * connection (restart) or hold every byte back (hang) without touching the shared server (TLS passes
 * through it end to end). Without it the suites skip those cases and say so.
 */
export function kubernetesConformance(
  title: string,
  connection: () => Record<string, unknown>,
  proxied?: (server: string) => Record<string, unknown>,
): void {
  const runner = { describe: entry ? describe : describe.skip, test };
  let namespace = 'default';
  let musters: Muster[] = [];
  let proxy: TcpProxy | undefined;
  let viaProxy: Record<string, unknown> | undefined;

  beforeAll(async () => {
    if (!entry) return;
    namespace = await createNamespace('muster-conformance');
    const server = new URL(entry.server);
    if (proxied) proxy = await startTcpProxy({ target: { host: server.hostname, port: Number(server.port) } });
    if (proxy && proxied) viaProxy = proxied(`https://${proxy.address}`);
  });
  afterAll(async () => {
    await Promise.allSettled(musters.map((m) => m.close()));
    await proxy?.close();
    if (entry) await deleteNamespace(namespace);
  });

  async function port(name: 'discovery' | 'lock' | 'heartbeat', options = connection()) {
    const muster = await createMuster({ [name]: { adapter: 'kubernetes', options: { ...options, namespace } } });
    musters.push(muster);
    return muster;
  }

  const hang = proxied ? { begin: () => proxyHang(proxy!).begin(), end: () => proxyHang(proxy!).end() } : undefined;

  lockConformance(runner, {
    name: `kubernetes Lease (${title})`,
    ttl: 2000,
    factory: async () => (await port('lock', viaProxy ?? connection())).lock,
    ...(hang ? { hang } : {}),
  });

  heartbeatConformance(runner, {
    name: `kubernetes Lease per member (${title})`,
    ttl: 1000,
    propagation: 5000,
    factory: async () => (await port('heartbeat', viaProxy ?? connection())).heartbeat,
    ...(hang ? { hang } : {}),
  });

  let serial = 0;
  discoveryConformance(runner, {
    name: `kubernetes EndpointSlices (${title})`,
    // The EndpointSlice controller registers pods; Muster writes no slices.
    capabilities: { register: false },
    faults: { outage: proxied !== undefined, restart: proxied !== undefined },
    propagation: 5000,
    async service(): Promise<DiscoveryControl> {
      const api = adminConfig().makeApiClient(k8s.DiscoveryV1Api);
      const service = `svc-${++serial}-${Math.random().toString(36).slice(2, 7)}`;
      const sliceName = (id: string) => `${service}-${id}`;
      const slice = (e: { id: string; address: string; port: number; ready: boolean }): k8s.V1EndpointSlice => ({
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: { name: sliceName(e.id), labels: { 'kubernetes.io/service-name': service } },
        // The API refuses loopback IPs in IPv4 slices; the kit's 127.0.0.x addresses pass as FQDN ones.
        addressType: e.address.startsWith('127.') ? 'FQDN' : 'IPv4',
        endpoints: [{ addresses: [e.address], conditions: { ready: e.ready }, targetRef: { kind: 'Pod', name: e.id, namespace } }],
        ports: [{ name: 'cql', port: e.port, protocol: 'TCP' }],
      });
      return {
        service,
        add: async (e) => void (await api.createNamespacedEndpointSlice({ namespace, body: slice(e) })),
        setReady: async (id, ready) => {
          const current = await api.readNamespacedEndpointSlice({ name: sliceName(id), namespace });
          current.endpoints[0]!.conditions = { ...current.endpoints[0]!.conditions, ready };
          await api.replaceNamespacedEndpointSlice({ name: sliceName(id), namespace, body: current });
        },
        remove: async (id) => void (await api.deleteNamespacedEndpointSlice({ name: sliceName(id), namespace })),
        ...(proxy ? proxyFaults(proxy) : {}),
        cleanup: async () => {
          proxy?.refuse(false);
          await Promise.all(musters.map((m) => m.close()));
          musters = [];
          await api.deleteCollectionNamespacedEndpointSlice({ namespace, labelSelector: `kubernetes.io/service-name=${service}` });
        },
      };
    },
    factory: async () => (await port('discovery', viaProxy ?? connection())).discovery,
  });
}
